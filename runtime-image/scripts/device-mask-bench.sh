#!/usr/bin/env bash
# What structured outputs cost a decode step (issue #30, item 3: at batch 32 at most 10% of the step), one GPU, one
# call from a fresh machine (device tool, kind nvidia-h200, carry [".device"]; about 200 s):
#   1. make   oracle/bench_make_8b.py --layers $LAYERS (random bf16 weights and a tokenizer covering the 128,256 ids;
#             skipped when $CKPT/.complete exists: device-fp8-bench.sh and device-spec-bench.sh make the same one)
#   2. bench  bench-model --mask-cost --batches $BATCHES (cli/ModelBenchMasks): per batch the same decode steps (greedy
#             draws, graph replays) unmasked and with every row walking its own token masks of a JSON schema compiled
#             on the checkpoint's tokenizer (the mask from the walk, its upload and the masked draw all inside the
#             timed wall time)
#   3. judge  masked / plain wall median at batch 32 <= 1.10, and every timed step of both runs replayed a graph
# Environment: LAYERS (32), BATCHES (1,8,32), CONTEXT (512), WARMUP (20), ITERS (50), CKPT (/tmp/tl-8b for 32 layers,
# else /tmp/tl-8b-l$LAYERS), BUDGET (300 s). Results under $OUT: masks.json (bench-model's), mask-bench.log. Last line:
# mask-bench: PASS|FAIL; exit 0 on PASS, 1 on FAIL, 2 when the checkpoint could not be made.
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
BUDGET=${BUDGET:-300}
STEPS=${STEPS:-make bench}
LOG="$OUT/mask-bench.log"
W=/tmp/tl-mask-bench
mkdir -p "$W"
. runtime-image/scripts/device-lib.sh
: > "$LOG"
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
say "== layers $LAYERS, batches $BATCHES, context $CONTEXT, warm-up $WARMUP, iters $ITERS, budget $BUDGET s"

if has_step make && [ ! -f "$CKPT/.complete" ]; then
  step "make 8B geometry ($LAYERS layers)" "$W/make.log" timeout "$(tmo 200 60)" \
    $PY $ORACLE/bench_make_8b.py --out "$CKPT" --layers "$LAYERS"
  grep '^bench_make_8b' "$W/make.log" | tee -a "$LOG"
fi
if [ ! -f "$CKPT/.complete" ]; then
  echo "mask-bench: FAIL (no checkpoint in $CKPT, see $LOG)" | tee -a "$LOG"
  exit 2
fi

if has_step bench; then
  t=$(tmo 240 10)
  step "bench-model --mask-cost" "$W/bench.log" timeout -s QUIT -k 5 "$t" $JAVA -jar "$APP" bench-model --model "$CKPT" \
    --tp 1 --batches "$BATCHES" --mask-cost --context "$CONTEXT" --warmup "$WARMUP" --iters "$ITERS" \
    --prefill-tokens 0 --max-seconds $(( t > 30 ? t - 15 : 15 )) --label mask-cost --json "$OUT/masks.json"
  grep -E '^(bench-model|masks|engine: (weights|loading))| batch|^ +[0-9]+ ' "$W/bench.log" | tee -a "$LOG"
fi

$PY - "$OUT/masks.json" <<'PY' 2>&1 | tee -a "$LOG"
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["masks"]["rows"]
except Exception as e:  # no JSON, or no masks section: the bench failed
    print(f"mask-bench: FAIL (no mask rows: {e})")
    sys.exit(1)
ok = True
for r in rows:
    replayed = r["plainReplayed"] == r["steps"] and r["maskedReplayed"] == r["steps"]
    ok &= replayed
    print(f"batch {r['batch']:3d}: plain {r['plainWallMs']:.3f} ms, masked {r['maskedWallMs']:.3f} ms = "
          f"{r['x_plain_wall']:.3f}x (gpu {r['x_plain_gpu']:.3f}x); replayed {r['plainReplayed']}/{r['maskedReplayed']} "
          f"of {r['steps']}; walks restarted {r['restarts']}" + ("" if replayed else "  <- not every step replayed"))
b32 = [r for r in rows if r["batch"] == 32]
if not b32:
    print("mask-bench: FAIL (no batch-32 row)")
    sys.exit(1)
x = b32[0]["x_plain_wall"]
ok &= x <= 1.10
print(f"mask-bench: {'PASS' if ok else 'FAIL'} (batch 32: masked step {x:.3f}x the plain one, target <= 1.10x)")
sys.exit(0 if ok else 1)
PY
exit "${PIPESTATUS[0]}"
