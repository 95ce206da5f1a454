#!/usr/bin/env bash
# The fused one-token linears' inner-loop variants (runtime FusedGemvVariant, tl_gemv_fused.cuh), the attention's fused
# combine (TENSORLANE_ATTN_COMBINE) and its folded rope + KV write (TENSORLANE_ATTN_ROPE) on the GPU machine
# (device tool, kind nvidia-h200, carry [".device"]; ~60 s):
#   1. check  kernelcheck --only "gemv_norm|gemv_norm_silu|gemv_res|attention|attention_fused_combine|attention_rope":
#             every variant against the unfused kernels, bit for bit, dense and FP8 (every scale layout), bf16 and fp16;
#             the attention against fp64, its key slices merged by their last block against the combine kernel, and the
#             attention with the rope folded in against qkv_rope + attention (output and caches), bit for bit
#   2. bench  bench-fused: each fused kernel of an 8B layer (qkv, o, gate_up, down) per weight type and variant, alone,
#             CUDA events, median of 200, weights cycled past the L2 cache, eager and per launch of a captured graph (no
#             host launch cost: what a decode step pays); the per-layer sum against the base variant;
#             then one decode token's rope + attention (32/8 heads, head dim 128, 512 keys), all four of rope kernel or
#             folded and combine kernel or fused
# Environment: STEPS ("check bench"), BUDGET (120 s). Results under $OUT: kernelcheck.txt, bench-fused.txt (printed
# last). Last line: fused-variants: PASS (every case passed and the bench ran) | FAIL.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh || { echo "fused-variants: FAIL (no .device bundle)"; exit 2; }
JAVA=".device/jre/bin/java -Xmx4g"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
STEPS=${STEPS:-check bench}
BUDGET=${BUDGET:-120}
LOG="$OUT/fused-variants.log"
: > "$LOG"
. runtime-image/scripts/device-lib.sh
say "== date: $(date -u +%FT%TZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
fails=0
if has_step check; then
  step "kernelcheck" "$OUT/kernelcheck.txt" timeout "$(tmo 90 30)" $JAVA -jar "$APP" kernelcheck \
    --only "gemv_norm|gemv_norm_silu|gemv_res|attention|attention_fused_combine|attention_rope"
  kc=$(grep -E "^kernelcheck: " "$OUT/kernelcheck.txt" | tail -1)
  say "check: ${kc:-no summary}"
  grep -E " FAIL$" "$OUT/kernelcheck.txt" | head -20 | tee -a "$LOG"
  case "$kc" in "kernelcheck: "[1-9]*" passed, 0 failed") ;; *) fails=$((fails + 1)) ;; esac
fi
if has_step bench; then
  step "bench-fused" "$OUT/bench-fused.txt" timeout "$(tmo 120 5)" $JAVA -jar "$APP" bench-fused || fails=$((fails + 1))
  cat "$OUT/bench-fused.txt" >> "$LOG"
fi
echo "================ fused variants ================"
grep -E "^check: " "$LOG"
cat "$OUT/bench-fused.txt" 2>/dev/null
if [ $fails -ne 0 ]; then echo "fused-variants: FAIL"; exit 1; fi
echo "fused-variants: PASS"
