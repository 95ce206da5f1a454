#!/usr/bin/env bash
# One call on the GPU machine (device tool; any kind, made for nvidia-h200-x2), from the carried .device/ (device-prepare.sh,
# then device-serve.sh --prepare, here). Builds nothing there. Runs, in order:
#   1. probe and probe --measure on the real GPUs (topology of a real pair; nvidia-smi topo -m beside it)
#   2. preflight --world-size <GPUs>: selftest + short bench on real ranks, the Measurement JSON the Job would report
#   3. device-serve.sh: serve with 8 virtual ranks until ready + metrics, then the two CUDA-OOM checks
# Everything lands in $OUT/x2.tgz (the tool returns at most 8 files); the short tables are printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tensorlane-out}
W=$(mktemp -d)
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
bash "$(dirname "$0")/device-unpack.sh" || exit 2   # .device/bundle.tar.xz -> .device/jre, .device/app
JAVA=".device/jre/bin/java -Xmx8g"
APP=.device/app/tensorlane-runtime-0.1.0-SNAPSHOT.jar
NCCL=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
GPUS=$(nvidia-smi -L | wc -l)
# one GPU: the preflight still runs 2 ranks (virtual ranks on that GPU; its timings are not interconnect timings)
WS=$(( GPUS < 2 ? 2 : GPUS ))
mkdir -p "$W/probe" "$W/preflight"
nvidia-smi topo -m > "$W/probe/nvidia-smi-topo.txt" 2>&1
$JAVA -jar "$APP" probe > "$W/probe/probe.json" 2> "$W/probe/probe.err"; echo "probe rc=$?" | tee "$W/probe/rc.txt"
$JAVA -jar "$APP" probe --measure > "$W/probe/probe-measure.json" 2> "$W/probe/probe-measure.err"
echo "probe --measure rc=$?" | tee -a "$W/probe/rc.txt"
TENSORLANE_TERMINATION_LOG="$W/preflight/termination.json" timeout 400 $JAVA -jar "$APP" preflight --world-size "$WS" \
  ${NCCL:+--nccl-lib "$NCCL"} --work-dir "$W/preflight/work" > "$W/preflight/preflight.log" 2>&1
echo "preflight rc=$?" | tee "$W/preflight/rc.txt"
OUT="$W" bash runtime-image/scripts/device-serve.sh > "$W/serve-run.log" 2>&1; echo "serve script rc=$?"
tar czf "$OUT/x2.tgz" -C "$W" .
echo "=== probe summary"; python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); s=d.get("summary",{})
print("gpus",s.get("gpuCount"),s.get("product"),"interconnect",s.get("interconnect"),"p2p",s.get("p2p"),"islands",s.get("islands"))
for l in d.get("links",[]): print(" link",l)' "$W/probe/probe-measure.json" 2>&1 | head -8
echo "=== preflight termination message"; head -c 1500 "$W/preflight/termination.json" 2>/dev/null; echo
echo "=== serve summary"; cat "$W"/serve/summary.txt 2>/dev/null || tail -20 "$W/serve-run.log"
