set -u
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
bash runtime-image/scripts/device-unpack.sh > /dev/null 2>&1
O=runtime-image/scripts/oracle; CK=/tmp/tl-moe30b-l8
python3 $O/bench_make_8b.py --geometry qwen3-30b-a3b --layers 8 --out $CK 2>&1 | grep '^bench_make' | cut -c1-200
python3 $O/bench_make_fp8.py --src $CK --out $CK-fp8b --variant fp8b 2>&1 | grep '^bench_make' | cut -c1-200
for m in "bf16:$CK" "fp8b:$CK-fp8b" "fp8b-deq:$CK-fp8b"; do
  e=""; [ "${m%%:*}" = fp8b-deq ] && e=TENSORLANE_MOE_FP8_GEMM=off
  env $e timeout 150 .device/jre/bin/java -Xmx8g -jar .device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar bench-model --model ${m#*:} --tp 1 --batches 1 --context 512 --prefill-tokens 2048 --warmup 20 --iters 5 --prefill-iters 3 --op-breakdown --json $OUT/prof-${m%%:*}.json > $OUT/prof-${m%%:*}.log 2>&1
  grep -iE "prefill|ops|moe|gemm" $OUT/prof-${m%%:*}.log | cut -c1-1500 | tail -8
done
