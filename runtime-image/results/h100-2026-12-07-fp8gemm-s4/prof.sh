# The op breakdown of a 2,048-token prefill on 8 layers of the Qwen3-30B-A3B geometry (random weights): bf16 (cuBLAS
# grouped expert GEMMs) against the same weights block-scaled FP8 with the grouped FP8 expert GEMM on, in one run.
# Device: OUT=$OUT bash runtime-image/scripts/device-batch.sh 'prof:150:bash runtime-image/results/h100-2026-12-07-fp8gemm-s4/prof.sh'
set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh > /dev/null 2>&1
O=runtime-image/scripts/oracle; CK=/tmp/tl-moe30b-l8
python3 $O/bench_make_8b.py --geometry qwen3-30b-a3b --layers 8 --out $CK 2>&1 | grep '^bench_make' | cut -c1-200
python3 $O/bench_make_fp8.py --src $CK --out $CK-fp8b --variant fp8b 2>&1 | grep '^bench_make' | cut -c1-200
for m in "bf16:$CK:" "fp8b-gemm:$CK-fp8b:TENSORLANE_MOE_FP8_GEMM=on"; do
  label=${m%%:*}; rest=${m#*:}; dir=${rest%%:*}; e=${rest#*:}
  env $e timeout 150 .device/jre/bin/java -Xmx8g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar bench-model \
    --model $dir --tp 1 --batches 1 --context 512 --prefill-tokens 2048 --warmup 20 --iters 5 --prefill-iters 5 \
    --op-breakdown --json $OUT/prof-$label.json > $OUT/prof-$label.log 2>&1
  echo "== $label"; grep -iE "prefill|ops" $OUT/prof-$label.log | cut -c1-1500 | tail -3
done
