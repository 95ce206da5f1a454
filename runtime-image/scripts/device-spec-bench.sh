#!/usr/bin/env bash
# The verify-step cost of speculative decoding on the Llama-3.1-8B geometry (issue 34, Performance item 1), one GPU,
# one call from a fresh machine (device tool, kind nvidia-h200, carry [".device"]; about 300 s):
#   1. make   oracle/bench_make_8b.py --layers $LAYERS (random bf16 weights, $CKPT; skipped when $CKPT/.complete exists)
#   2. on     bench-model --verify-ks $KS --batches $BATCHES with TENSORLANE_SPEC_GRAPHS=on: per batch, the plain decode
#             step (graph) and the verify step of each k (k + 1 tokens per sequence, logits for all; graph) in one run
#   3. off    the same with TENSORLANE_SPEC_GRAPHS=off: verify steps eager, decode steps still graphs
#   4. table  oracle/spec_bench_table.py: k x batch, the verify step's cost relative to the decode step of the same run
#             (wall median; GPU events beside it), graphs on and off, and the graphs' gain (eager / graph wall ms)
# PASS: with graphs on, k = 4 at batch 1 costs <= 1.3x a decode step (wall) and every timed verify step there replayed a
# graph. Environment: LAYERS (32), BATCHES (1,8,32), KS (1,2,3,4,5,6,7,8), CONTEXT (512), WARMUP (20), ITERS (30),
# STEPS ("make on off"; the table is always printed), CKPT (/tmp/tl-8b for 32 layers, else /tmp/tl-8b-l$LAYERS), BUDGET
# (330 s). Results under $OUT: spec-bench.txt (the
# table), on.json / off.json (bench-model's), spec-bench.log. Last line: spec-bench: PASS|FAIL; exit 0 on PASS, 1 on
# FAIL, 2 when the checkpoint could not be made.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
PY_LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
bash runtime-image/scripts/device-unpack.sh || { echo "spec-bench: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PY="env LD_LIBRARY_PATH=$PY_LD_LIBRARY_PATH ${PY:-python3}"
ORACLE=runtime-image/scripts/oracle
LAYERS=${LAYERS:-32}
# 32 layers: the checkpoint device-fp8-bench.sh makes too (reused on a warm machine)
if [ "$LAYERS" = 32 ]; then CKPT=${CKPT:-/tmp/tl-8b}; else CKPT=${CKPT:-/tmp/tl-8b-l$LAYERS}; fi
BATCHES=${BATCHES:-1,8,32}
KS=${KS:-1,2,3,4,5,6,7,8}
CONTEXT=${CONTEXT:-512}
WARMUP=${WARMUP:-20}
ITERS=${ITERS:-30}
STEPS=${STEPS:-make on off}
BUDGET=${BUDGET:-330}
LOG="$OUT/spec-bench.log"
W=/tmp/tl-spec-bench
mkdir -p "$W"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
say "== layers $LAYERS, batches $BATCHES, k $KS, context $CONTEXT, warm-up $WARMUP, iters $ITERS, budget $BUDGET s"

if has_step make && [ ! -f "$CKPT/.complete" ]; then
  step "make 8B geometry ($LAYERS layers)" "$W/make.log" timeout "$(tmo 200 90)" \
    $PY $ORACLE/bench_make_8b.py --out "$CKPT" --layers "$LAYERS"
  grep '^bench_make_8b' "$W/make.log" | tee -a "$LOG"
fi
if [ ! -f "$CKPT/.complete" ]; then
  echo "spec-bench: FAIL (no checkpoint in $CKPT, see $LOG)" | tee -a "$LOG"
  exit 2
fi

bench() {   # bench LABEL on|off RESERVE: bench-model with TENSORLANE_SPEC_GRAPHS=on|off, JSON to $OUT/LABEL.json
  local label=$1 graphs=$2 reserve=$3 t
  t=$(tmo 150 "$reserve")
  if [ "$t" -lt 40 ]; then say "== $label: skipped, $(left) s left"; return 1; fi
  step "bench-model $label (TENSORLANE_SPEC_GRAPHS=$graphs)" "$W/$label.log" \
    env TENSORLANE_SPEC_GRAPHS="$graphs" timeout -s QUIT -k 5 "$t" $JAVA -jar "$APP" bench-model --model "$CKPT" \
    --tp 1 --batches "$BATCHES" --verify-ks "$KS" --context "$CONTEXT" --warmup "$WARMUP" --iters "$ITERS" \
    --prefill-tokens 0 --max-seconds $(( t - 15 )) --label "spec-graphs-$graphs" --json "$OUT/$label.json"
  grep -E '^(bench-model|verify|engine: (weights|loading))' "$W/$label.log" | tee -a "$LOG"
}
# the graphs-on run is the judged one: it goes first, and keeps 10 s for the table; the off run gets what is left
has_step on && bench on on 100
has_step off && bench off off 10

{
  echo "================ spec-bench: $(date -u +%FT%TZ) ================"
  $PY $ORACLE/spec_bench_table.py --on "$OUT/on.json" --off "$OUT/off.json"
} > "$OUT/spec-bench.txt" 2>&1
rc=$?
cat "$OUT/spec-bench.txt" >> "$LOG"
cat "$OUT/spec-bench.txt"
if ! tail -1 "$OUT/spec-bench.txt" | grep -q '^spec-bench: '; then echo "spec-bench: FAIL (no table, see $LOG)"; exit 1; fi
[ $rc -eq 0 ] || exit 1
