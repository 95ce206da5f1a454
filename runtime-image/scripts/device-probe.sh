#!/usr/bin/env bash
# Runs the topology probe on the device machine (the `run` tool; see shared/DEVICE.md). Builds nothing there.
#
# Prepare here (this machine has Java and Maven, the device machine has neither):
#   mvn -B -o -q -pl crd,runtime-image install -DskipTests      (runtime jar + target/lib)
#   runtime-image/scripts/device-probe.sh --stage               (jlink'd JRE + jars into .device-probe/, git-ignored)
# Then, with the run tool: carry [".device-probe"], command "runtime-image/scripts/device-probe.sh".
#
# On the device it runs `nvidia-smi topo -m` (for comparison), `probe` and `probe --measure`; full outputs go to $OUT,
# a short table last.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=.device-probe

if [[ "${1:-}" == "--stage" ]]; then
  set -e
  rm -rf "$D" && mkdir -p "$D/lib"
  jlink --add-modules java.base,java.logging,java.management,jdk.unsupported,java.naming,jdk.crypto.ec \
    --strip-debug --no-man-pages --no-header-files --compress=2 --output "$D/jre"
  cp runtime-image/target/tensorlane-runtime-*.jar runtime-image/target/lib/*.jar "$D/lib/"
  # the run tool carries at most 64 MiB: keep only the Kubernetes model jars the probe touches (core, common)
  find "$D/lib" -name 'kubernetes-model-*.jar' ! -name 'kubernetes-model-core-*' ! -name 'kubernetes-model-common-*' -delete
  # ...and drop JCuda's 24 MB nvPTXCompiler binding (unused: kernels are compiled ahead of time)
  (cd "$D/lib" && mkdir x && cd x && jar xf ../jcuda-natives-*.jar && rm -f lib/libJNvPTXCompiler-* \
    && jar cfm ../jcuda-natives-*.jar META-INF/MANIFEST.MF lib && cd .. && rm -rf x)
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
# --publish is not run there: no API server, and only the core/common model jars travel (the fabric8 client needs
# them all); PublisherClusterTest covers it against the local control plane.

cat "$log"
echo; cat "$OUT/nvidia-smi.txt"
echo; echo "---- probe.json"; cat "$OUT/probe.json"
echo; echo "---- table"; cat "$OUT/table.txt"
