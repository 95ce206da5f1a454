#!/usr/bin/env bash
# Runs the topology probe on the device machine (the `run` tool; see shared/DEVICE.md). Builds nothing there.
#
# Prepare here (this machine has Java and Maven, the device machine has neither):
#   mvn -B -o -q -pl crd,runtime-image install -DskipTests      (runtime jar + target/lib)
#   runtime-image/scripts/device-probe.sh --stage               (jlink'd JRE + jars into .device-probe/, git-ignored)
# Then, with the run tool: carry [".device-probe"], command "runtime-image/scripts/device-probe.sh".
#
# On the device it runs `nvidia-smi topo -m` (for comparison), `probe`, `probe --measure`, and `probe --publish`
# against an unreachable API server (must fail with one line and exit 4); full outputs go to $OUT, a short table last.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=.device-probe

if [[ "${1:-}" == "--stage" ]]; then
  set -e
  rm -rf "$D" && mkdir -p "$D/lib"
  jlink --add-modules java.base,java.logging,java.management,jdk.unsupported,java.naming,jdk.crypto.ec \
    --strip-debug --no-man-pages --no-header-files --compress=2 --output "$D/jre"
  cp runtime-image/target/tensorlane-runtime-*.jar runtime-image/target/lib/*.jar "$D/lib/"
  du -sh "$D"
  exit 0
fi

OUT=${OUT:-/tmp/device-probe-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
java() { timeout 150 "$D/jre/bin/java" -cp "$D/lib/*" io.tensorlane.runtime.cli.Main "$@"; }
log="$OUT/probe.log"
{ date -u +%FT%TZ; nvidia-smi --query-gpu=index,name,memory.total,pci.bus_id,driver_version,compute_cap --format=csv
  echo; nvidia-smi topo -m; } > "$OUT/nvidia-smi.txt" 2>&1

step() { # name, stdout file, args...
  local name=$1 file=$2; shift 2
  local t0=$SECONDS
  echo "== $name: probe $*" >> "$log"
  java probe "$@" > "$OUT/$file" 2>> "$log"
  local rc=$?
  echo "== $name: rc=$rc in $((SECONDS - t0))s" >> "$log"
  printf '%-10s rc=%-3s %ss\n' "$name" "$rc" "$((SECONDS - t0))" >> "$OUT/table.txt"
}
: > "$OUT/table.txt"
step probe probe.json
step measure probe-measure.json --measure
(export KUBERNETES_MASTER=https://127.0.0.1:1 KUBERNETES_REQUEST_RETRY_BACKOFFLIMIT=0 \
   KUBERNETES_AUTH_TRYKUBECONFIG=false KUBERNETES_AUTH_TRYSERVICEACCOUNT=false
 step publish publish.json --publish --node device-h200)

cat "$log"
echo; cat "$OUT/nvidia-smi.txt"
echo; echo "---- probe.json"; cat "$OUT/probe.json"
echo; echo "---- table"; cat "$OUT/table.txt"
