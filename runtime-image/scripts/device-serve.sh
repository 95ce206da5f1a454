#!/usr/bin/env bash
# serve (synthetic mode) on the GPU machine (device tool). Builds nothing there: it runs the jlinked JRE and jars in
# .device/ (carried with carry: [".device"]).
#
# Here, once, after runtime-image/scripts/device-prepare.sh (which recreates .device/):
#   runtime-image/scripts/device-serve.sh --prepare
# adds what serve needs to .device/: a JRE with jdk.httpserver + java.management (a superset of the engine's, so
# device-engine.sh keeps working), Micrometer/Prometheus and JCublas jars, and the runtime jar with serve in it.
#
# There (device tool, repository root):  bash runtime-image/scripts/device-serve.sh
#   1. serve --tp 8 --virtual-ranks --memory-fraction 0.85: wait for /health/ready (curl), scrape /metrics twice, stop it
#      (cuBLAS needs libcublas.so.12: searched in the machine's Python packages; if absent, the run uses --gemm none
#      and says so)
#   2. forced fraction 0.999: must exit 3 with the CUDA-OOM termination message, phase static-pool
#   3. static pool leaving 64 MiB free: the allreduce buffers (8 x ~18 MiB) must OOM, phase ipc-buffers (the seed's case)
# Results under $OUT/serve/: serve.log metrics-1.txt metrics-2.txt oom-pool.log oom-pool.json oom-ipc.log oom-ipc.json
# summary.txt. The short table is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."

DEV=${DEVICE_DIR:-.device}   # where the carried JRE and jars are (the device tool carries .device)
if [ "${1:-}" = "--prepare" ]; then
  set -e
  [ -d "$DEV/app" ] || { echo "run runtime-image/scripts/device-prepare.sh first (it creates .device/)" >&2; exit 2; }
  mvn -B -o -q -pl runtime-image package -DskipTests -Dtensorlane.skipImages
  rm -rf "$DEV/jre"
  jlink --add-modules java.base,java.logging,java.management,jdk.unsupported,jdk.httpserver --strip-debug \
    --no-man-pages --no-header-files --compress=2 --output "$DEV/jre"
  cp runtime-image/target/tensorlane-runtime-0.1.0-SNAPSHOT.jar "$DEV/app/"
  for j in micrometer-core micrometer-commons micrometer-observation micrometer-registry-prometheus prometheus-metrics \
      HdrHistogram LatencyUtils jcublas-12 jcublas-natives; do
    cp runtime-image/target/lib/$j*.jar "$DEV/app/lib/"
  done
  du -sh "$DEV"
  exit 0
fi

# results in $OUT/serve/ (device-engine.sh writes its own files, e.g. summary.txt, to $OUT in the same call)
OUT=${OUT:-/tmp/tensorlane-out}/serve
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA="$DEV/jre/bin/java -Xmx8g"
APP="$DEV/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar"
PORT=${SERVE_PORT:-18080}
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

# cuBLAS 12 for JCublas 12.0.0: the CUDA 12 wheels of the machine's Python packages, else the system
CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
if [ -n "$CUBLAS_DIR" ] && [ -e "$CUBLAS_DIR/libcublas.so.12" ]; then
  export LD_LIBRARY_PATH="$CUBLAS_DIR:$LD_LIBRARY_PATH"
  GEMM=cublas
elif ldconfig -p 2>/dev/null | grep -q 'libcublas.so.12 '; then
  GEMM=cublas
else
  GEMM=none
fi
NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
{
  echo "== date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
  echo "== cuBLAS: ${CUBLAS_DIR:-not in Python packages} -> gemm=$GEMM"
  ls "$CUBLAS_DIR" 2>/dev/null | head -5
} > "$OUT/env.log" 2>&1
note "date $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); gemm=$GEMM"

serve() { $JAVA -jar "$APP" serve --synthetic --tp 8 --virtual-ranks --port "$PORT" "$@"; }
# status code of GET $1 (curl, or Python where curl is missing); "000" when nothing answers
http_code() {
  if command -v curl > /dev/null; then curl -s -o /dev/null -w '%{http_code}' "$1" || true
  else python3 -c 'import sys, urllib.request, urllib.error
try: print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except urllib.error.HTTPError as e: print(e.code)
except Exception: print("000")' "$1"; fi
}
http_body() {
  if command -v curl > /dev/null; then curl -s "$1"
  else python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"; fi
}

# ---- 1. ready + metrics ------------------------------------------------------------------------------------------
start_serve() {
  serve --memory-fraction 0.85 --gemm "$1" --duration 150s > "$OUT/serve.log" 2>&1 &
  SERVE_PID=$!
  T0=$(date +%s.%N)
  READY=no
  for _ in $(seq 1 900); do
    state=$(awk '{print $3}' "/proc/$SERVE_PID/stat" 2>/dev/null)
    if [ -z "$state" ] || [ "$state" = Z ]; then break; fi   # exited (a zombie until waited for)
    code=$(http_code "http://127.0.0.1:$PORT/health/ready")
    if [ "$code" = "200" ]; then READY=yes; break; fi
    sleep 0.2
  done
  T1=$(date +%s.%N)
}
start_serve "$GEMM"
if [ "$READY" != yes ] && [ "$GEMM" = cublas ] && grep -q "cuBLAS is not available" "$OUT/serve.log"; then
  note "cuBLAS could not be loaded (see serve.log); rerunning with --gemm none (allreduces only)"
  cp "$OUT/serve.log" "$OUT/serve-cublas-failed.log"
  GEMM=none
  start_serve none
fi
note "serve --tp 8 --virtual-ranks --memory-fraction 0.85 --gemm $GEMM: ready=$READY after $(awk "BEGIN {printf \"%.1f\", $T1 - $T0}") s"
if [ "$READY" = yes ]; then
  note "/health/live: $(http_code "http://127.0.0.1:$PORT/health/live")"
  sleep 5
  http_body "http://127.0.0.1:$PORT/metrics" > "$OUT/metrics-1.txt"
  sleep 10
  http_body "http://127.0.0.1:$PORT/metrics" > "$OUT/metrics-2.txt"
fi
kill -TERM "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID"
note "serve exit code after SIGTERM: $? (0 or 143 expected)"
grep -E "^serve" "$OUT/serve.log" | head -12 | tee -a "$SUMMARY"

# ---- 2. forced fraction 0.999: static pool OOM --------------------------------------------------------------------
# a fresh port for each run: the first server's port can still be held by closing connections (TIME_WAIT)
TENSORLANE_TERMINATION_LOG="$OUT/oom-pool.json" timeout 120 $JAVA -jar "$APP" serve --synthetic --tp 8 --virtual-ranks --port "$((PORT + 1))" \
  --memory-fraction 0.999 --gemm "$GEMM" --steps 1 > "$OUT/oom-pool.log" 2>&1
note "fraction 0.999: exit code $? (3 expected); termination message: $(cat "$OUT/oom-pool.json" 2>/dev/null || echo none)"

# ---- 3. pool leaves 64 MiB: the allreduce buffers OOM ---------------------------------------------------------------
TENSORLANE_TERMINATION_LOG="$OUT/oom-ipc.json" timeout 120 $JAVA -jar "$APP" serve --synthetic --tp 8 --virtual-ranks --port "$((PORT + 2))" \
  --memory-fraction 0.5 --static-pool-leave-bytes 67108864 --gemm "$GEMM" --steps 1 > "$OUT/oom-ipc.log" 2>&1
note "pool leaving 64 MiB free: exit code $? (3 expected); termination message: $(cat "$OUT/oom-ipc.json" 2>/dev/null || echo none)"

echo "================ short table ================"
cat "$SUMMARY"
if [ -s "$OUT/metrics-2.txt" ]; then
  echo "-- metrics (second scrape) --"
  grep -E "^tensorlane_(allreduce_calls_total|allreduce_latency_seconds_(count|sum|max)|allreduce_buffer_bytes|static_pool_bytes|steps_total|ready|serve_info)" \
    "$OUT/metrics-2.txt" | tee -a "$SUMMARY"
  # mean latency per algorithm/size from the timer's sum and count
  awk -F'[{} ]' '/^tensorlane_allreduce_latency_seconds_sum/ {s[$2]=$4} /^tensorlane_allreduce_latency_seconds_count/ {c[$2]=$4}
    END {for (k in s) if (c[k] > 0) printf "mean %s: %.1f us over %d calls\n", k, s[k] / c[k] * 1e6, c[k]}' \
    "$OUT/metrics-2.txt" | tee -a "$SUMMARY"
fi
