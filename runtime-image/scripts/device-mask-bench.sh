#!/usr/bin/env bash
# The cost of structured outputs' token masks in the decode step (issue #30 item 3: at batch 32 <= 10% of the decode
# step), Llama-3.1-8B geometry (vocabulary 128,256), one GPU, one call (device tool, kind nvidia-h200, carry [".device"];
# about 300 s from a fresh machine, less when /tmp/tl-8b is there):
#   1. make   oracle/bench_make_8b.py --layers $LAYERS (random bf16 weights, $CKPT; skipped when $CKPT/.complete exists;
#             the checkpoint device-fp8-bench.sh and device-spec-bench.sh make too)
#   2. plain  bench-model --batches $BATCHES: greedy decode steps (CUDA graphs), no masks
#   3. masks  the same with --masks: every row greedy under a token mask (random, half the vocabulary; a pool per row as
#             the server's cached masks, so the host's mask computation is not in it: TokenMasks computes a state's
#             mask once per schema and tokenizer, ~1 ms at 152k ids, TokenMasksTest)
#   4. table  oracle/mask_bench_table.py: per batch the plain and masked step (wall and GPU-event medians), the masks'
#             cost relative to the plain step, the graph-replayed steps of each
# PASS: at batch 32 the masked step costs at most 10% more than the plain one (wall medians). Environment: LAYERS (32),
# BATCHES (1,8,32), CONTEXT (512), WARMUP (20), ITERS (50), STEPS ("make plain masks"), CKPT, BUDGET (570 s). Results
# under $OUT: mask-bench.txt (the table), plain.json / masks.json (bench-model's), mask-bench.log. Last line
# `mask-bench: PASS|FAIL`; exit 0 on PASS, 1 on FAIL, 2 when the checkpoint could not be made.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash runtime-image/scripts/device-unpack.sh || { echo "mask-bench: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
LAYERS=${LAYERS:-32}
if [ "$LAYERS" = 32 ]; then CKPT=${CKPT:-/tmp/tl-8b}; else CKPT=${CKPT:-/tmp/tl-8b-l$LAYERS}; fi
BATCHES=${BATCHES:-1,8,32}
CONTEXT=${CONTEXT:-512}
WARMUP=${WARMUP:-20}
ITERS=${ITERS:-50}
STEPS=${STEPS:-make plain masks}
BUDGET=${BUDGET:-570}
LOG="$OUT/mask-bench.log"
W=/tmp/tl-mask-bench
mkdir -p "$W"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
say "== layers $LAYERS, batches $BATCHES, context $CONTEXT, warm-up $WARMUP, iters $ITERS, budget $BUDGET s"

if has_step make && [ ! -f "$CKPT/.complete" ]; then
  step "make 8B geometry ($LAYERS layers)" "$W/make.log" timeout "$(tmo 200 200)" \
    $PY $ORACLE/bench_make_8b.py --out "$CKPT" --layers "$LAYERS"
  grep '^bench_make_8b' "$W/make.log" | tee -a "$LOG"
fi
if [ ! -f "$CKPT/.complete" ]; then
  echo "mask-bench: FAIL (no checkpoint in $CKPT, see $LOG)" | tee -a "$LOG"
  exit 2
fi

bench() {   # bench LABEL RESERVE [ARGS...]: bench-model, JSON to $OUT/LABEL.json
  local label=$1 reserve=$2 t; shift 2
  t=$(tmo 200 "$reserve")
  if [ "$t" -lt 40 ]; then say "== $label: skipped, $(left) s left"; return 1; fi
  step "bench-model $label" "$W/$label.log" timeout -s QUIT -k 5 "$t" $JAVA -jar "$APP" bench-model --model "$CKPT" \
    --tp 1 --batches "$BATCHES" --context "$CONTEXT" --warmup "$WARMUP" --iters "$ITERS" --prefill-tokens 0 \
    --max-seconds $(( t - 15 )) --label "$label" --json "$OUT/$label.json" "$@"
  grep -E '^(bench-model|decode|engine: (weights|loading))' "$W/$label.log" | tee -a "$LOG"
}
# the plain run keeps time for the masked one and the table
has_step plain && bench plain 120
has_step masks && bench masks 10 --masks

{
  echo "================ mask-bench: $(date -u +%FT%TZ) ================"
  $PY $ORACLE/mask_bench_table.py --plain "$OUT/plain.json" --masks "$OUT/masks.json"
} > "$OUT/mask-bench.txt" 2>&1
rc=$?
cat "$OUT/mask-bench.txt" >> "$LOG"
cat "$OUT/mask-bench.txt"
if ! tail -1 "$OUT/mask-bench.txt" | grep -q '^mask-bench: '; then echo "mask-bench: FAIL (no table, see $LOG)"; exit 1; fi
[ $rc -eq 0 ] || exit 1
