#!/usr/bin/env bash
# Where a MoE prefill's time goes, bf16 against FP8 in one run (device tool, carry [".device"]; GPU 0): 8 layers of the
# Qwen3-30B-A3B geometry with random bf16 weights (oracle/bench_make_8b.py) and the same weights block-scaled FP8
# (oracle/bench_make_fp8.py), then bench-model --op-breakdown on each: the wall median of a 2,048-token prefill and one
# eager pass with an event after each operation (expert gate_up and down among them), plus the batch-1 step.
#   OUT=$OUT bash runtime-image/scripts/device-batch.sh 'prof:120:bash runtime-image/scripts/device-moe-prof.sh'
# SPECS: label:checkpoint suffix:environment, each run in turn ("bf16:: fp8b:-fp8b:": bf16, and FP8 as the engine runs
# it by default; e.g. fp8b-deq:-fp8b:TENSORLANE_MOE_FP8_GEMM=off for the experts dequantized). Results under $OUT:
# prof-<label>.json and .log; the prefill and op lines printed.
set -u
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh > /dev/null 2>&1
O=runtime-image/scripts/oracle; CK=/tmp/tl-moe30b-l8
python3 $O/bench_make_8b.py --geometry qwen3-30b-a3b --layers 8 --out $CK 2>&1 | grep '^bench_make' | cut -c1-200
python3 $O/bench_make_fp8.py --src $CK --out $CK-fp8b --variant fp8b 2>&1 | grep '^bench_make' | cut -c1-200
for m in ${SPECS:-bf16:: fp8b:-fp8b:}; do
  label=${m%%:*}; rest=${m#*:}; dir=$CK${rest%%:*}; e=${rest#*:}
  env $e timeout 150 .device/jre/bin/java -Xmx8g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar bench-model \
    --model "$dir" --tp 1 --batches 1 --context 512 --prefill-tokens 2048 --warmup 20 --iters 5 --prefill-iters 5 \
    --op-breakdown --json "$OUT/prof-$label.json" > "$OUT/prof-$label.log" 2>&1 || echo "$label: exit $?"
  echo "== $label${e:+ ($e)}"; grep -iE "prefill|ops" "$OUT/prof-$label.log" | cut -c1-1500 | tail -3
done
