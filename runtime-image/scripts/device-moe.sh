#!/usr/bin/env bash
# Mixture-of-Experts on the GPU machine (device tool, kind nvidia-h200, carry [".device"]; issue #31). One call:
#   1. models   device-models.sh on the trained qwen3moe (16 experts, top-2, layer 0 dense) and mixtral (8 experts,
#               expert intermediate 702: TP 1 and 2 only): train, reference, tokenize, generate, compare (TPS, TPS_mixtral)
#   2. routing  each of ROUTING_RUNS ("qwen3moe:1 qwen3moe:2 mixtral:1"): the engine's prefill routing
#               (TENSORLANE_MOE_ROUTING_DUMP) against transformers' (oracle/moe_routing.py: >= 99.5% of (token, slot)
#               pairs, every disagreement with transformers' k-th/(k+1)-th probability gap)
#   3. bench    Qwen3-30B-A3B geometry with BENCH_LAYERS (8) layers, random bf16 weights (oracle/bench_make_8b.py
#               --geometry qwen3-30b-a3b): bench-model (decode at BATCHES, context 512, prefill 2048) and
#               bench_transformers.py (read bandwidth; eager decode and prefill, transformers' default experts
#               implementation), then oracle/moe_bench_summary.py
# STEPS ("models routing bench"), BUDGET (570 s), BENCH_ARGS (extra bench-model arguments, e.g. --op-breakdown).
# Results under $OUT: models.txt, routing-*.json, moe-bench.txt, moe-ours.log and the raw JSON; exit 0 when every part
# passes.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2
JAVA=".device/jre/bin/java -Xmx8g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY=python3
ORACLE=runtime-image/scripts/oracle
STEPS=${STEPS:-models routing bench}
BUDGET=${BUDGET:-570}
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
has() { [[ " $STEPS " == *" $1 "* ]]; }
rc=0
if has models; then
  STEPS="train ref tok gen compare" MODELS="qwen3moe mixtral" TPS_mixtral="${TPS_mixtral:-1 2}" BUDGET=$(( $(left) > 300 ? 200 : $(left) - 60 )) \
    OUT="$OUT" bash runtime-image/scripts/device-models.sh > "$OUT/models-stdout.txt" 2>&1 || rc=1
  tail -30 "$OUT/models-stdout.txt" | cut -c1-220
fi
if has routing; then
  for spec in ${ROUTING_RUNS:-qwen3moe:1 qwen3moe:2 mixtral:1}; do
    m=${spec%%:*}; tp=${spec#*:}
    dump=/tmp/routing-$m-tp$tp.bin; rm -f "$dump"
    TENSORLANE_MOE_ROUTING_DUMP=$dump timeout 120 $JAVA -jar "$APP" generate --model /tmp/tl-models/$m --tp "$tp" \
      --virtual-ranks --prompts-file /tmp/tl-ref/$m/prompts.jsonl --max-tokens 1 --json > /tmp/routing-$m-$tp.out \
      2> /tmp/routing-$m-$tp.err || { echo "routing $m tp$tp: generate failed"; tail -5 /tmp/routing-$m-$tp.err; rc=1; continue; }
    $PY $ORACLE/moe_routing.py --model /tmp/tl-models/$m --prompts /tmp/tl-ref/$m/prompts.jsonl --dump "$dump" \
      --out "$OUT/routing-$m-tp$tp.json" > /tmp/routing-$m-$tp.log 2>&1 || rc=1
    grep -vE '^(Loading|Writing)' /tmp/routing-$m-$tp.log | sed "s/^/[$m tp$tp] /" | head -25
  done
fi
if has bench; then
  CK=/tmp/tl-moe30b
  timeout 200 $PY $ORACLE/bench_make_8b.py --geometry qwen3-30b-a3b --layers "${BENCH_LAYERS:-8}" --out $CK 2>&1 | grep '^bench_make' | cut -c1-250
  t=$(( $(left) / 3 )); [ $t -gt 150 ] && t=150
  timeout -s QUIT -k 5 $t $JAVA -jar "$APP" bench-model --model $CK --tp 1 --batches "${BATCHES:-1,8,32,128}" \
    --context 512 --prefill-tokens 2048 --warmup 200 --iters 30 --prefill-iters 5 --max-seconds $(( t - 15 )) \
    --label moe-tp1 --json "$OUT/moe-ours.json" ${BENCH_ARGS:-} > /tmp/moe-ours.log 2>&1 || rc=1
  cp /tmp/moe-ours.log "$OUT/moe-ours.log"
  grep -E '^(bench-model|load|engine: loaded| batch| +[0-9]+ |prefill)' /tmp/moe-ours.log | cut -c1-200
  t=$(( $(left) - 15 ))
  timeout -k 10 $t $PY $ORACLE/bench_transformers.py --model $CK --parts bw,eager --batches "${BATCHES:-1,8,32,128}" \
    --context 512 --prefill 2048 --warmup 3 --iters 10 --prefill-iters 3 --budget $(( t - 10 )) \
    --out "$OUT/moe-transformers.json" > /tmp/moe-tf.log 2>&1
  grep -E 'bw:|eager|ERROR|Error' /tmp/moe-tf.log | cut -c1-200 | head -20
  $PY $ORACLE/moe_bench_summary.py --model $CK --ours "$OUT/moe-ours.json" --tf "$OUT/moe-transformers.json" \
    --out "$OUT/moe-bench.json" | tee "$OUT/moe-bench.txt" || rc=1
fi
echo "device-moe: exit $rc, $(( $(date +%s) - T0 )) s"
exit $rc
