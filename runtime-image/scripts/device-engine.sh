#!/usr/bin/env bash
# The engine's checks and timings on the GPU machine (device tool). Builds nothing there: it runs the jlinked JRE
# and jars that runtime-image/scripts/device-prepare.sh put in .device/ (carried with carry: [".device"]).
#   1. environment (GPU, driver), `version`, cuobjdump of the bundled fatbin
#   2. selftest: world sizes 2..8 (virtual ranks on one GPU) x bf16/fp16/fp32 x OneStage/TwoStage/Ring x odd/even
#      counts, table-selected calls, CUDA-graph replays, the watchdog check
#   3. bench: 8 ranks, bf16, 1 KiB..64 MiB, eager + graph replay, copy ceiling, NCCL (as many ranks as GPUs)
#   4. CUDA OOM: a static pool of 99.95% of free memory, then the communicator -> exit 3 + termination message
# Results under $OUT (<= 8 files): misc.log selftest.log bench.log bench.csv bench.svg table.json summary.txt
# The short table is printed last.
set -uo pipefail
OUT=${OUT:-/tmp/tensorlane-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
# NVLink multicast stays off on the multi-GPU machines (NCCL NVLS, symmetric memory, NVSHMEM).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
BENCH_WORLD=${BENCH_WORLD:-8}   # 8 virtual ranks on one GPU; on a 2/4/8-GPU machine: the GPU count (real P2P ranks)
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx16g -XX:+UseParallelGC"
APP=".device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
run() { $JAVA -jar "$APP" "$@"; }
SELFTEST_ARGS=${SELFTEST_ARGS:-}
BENCH_ARGS=${BENCH_ARGS:-}

NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
{
  echo "== date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  nvidia-smi topo -m 2>&1 | head -12
  echo "== nccl: ${NCCL:-not found}"
  run version
  echo "== cuobjdump of the bundled fatbin"
  python3 - <<'PY'
import zipfile, glob
jar = glob.glob('.device/app/lib/tensorlane-kernels-*.jar')[0]
open('/tmp/tl.fatbin', 'wb').write(zipfile.ZipFile(jar).read('io/tensorlane/kernels/tl_allreduce.fatbin'))
PY
  (cuobjdump --list-elf /tmp/tl.fatbin && cuobjdump --list-ptx /tmp/tl.fatbin) 2>&1 | sed 's/^/  /' | head -20
} > "$OUT/misc.log" 2>&1

echo "== selftest"
timeout 330 $JAVA -jar "$APP" selftest --world-sizes 2..8 --watchdog-check ${NCCL:+--nccl-lib "$NCCL"} $SELFTEST_ARGS 2>&1 | tee "$OUT/selftest.log" | grep -E "FAIL|watchdog|selftest:|world|Exception|error" | head -60
selftest_rc=${PIPESTATUS[0]}

echo "== bench"
timeout 200 $JAVA -jar "$APP" bench --world-size $BENCH_WORLD --dtype bf16 --out-dir "$OUT" ${NCCL:+--nccl-lib "$NCCL"} $BENCH_ARGS 2>&1 | tee "$OUT/bench.log" | tail -3
bench_rc=${PIPESTATUS[0]}

echo "== CUDA OOM at buffer allocation"
{
  TENSORLANE_TERMINATION_LOG="$OUT/termination-log.json" timeout 60 $JAVA -jar "$APP" selftest --world-sizes 8 --dtypes bf16 \
    --algorithms OneStage --counts 4000000 --occupy-fraction 0.9995
  oom_rc=$?
  echo "oom exit code: $oom_rc (expected 3)"
  echo "termination-log: $(cat "$OUT/termination-log.json" 2>/dev/null)"
  rm -f "$OUT/termination-log.json"
} >> "$OUT/misc.log" 2>&1

echo "================ short table ================"
grep -E "^== date|NVIDIA|^tensorlane-runtime|^kernels" "$OUT/misc.log" | head -5
grep -E "selftest:|^watchdog|^leak check|nccl-fallback|^NCCL" "$OUT/selftest.log"
echo "selftest exit code: $selftest_rc   bench exit code: $bench_rc"
grep -E "oom exit code|termination-log" "$OUT/misc.log"
cat "$OUT/summary.txt" 2>/dev/null
