#!/usr/bin/env bash
# Prepares .device/ (ignored by git; carried to the GPU machine with carry: [".device"]): one xz archive,
# .device/bundle.tar.xz, holding a jlinked JRE and the runtime jar with the libraries the engine's commands need (most
# of the probe's Kubernetes client stays behind). The device tool carries at most 64 MiB with the working tree; the JRE
# and jars take ~100 MiB unpacked and ~45 MiB as xz. The GPU scripts unpack it with scripts/device-unpack.sh.
set -euo pipefail
# A fresh machine may lack some of these (Debian ships no zip or unzip by default): say which before building anything.
# Shell builtins only up to here, so the check runs first and changes nothing when it fails.
missing=()
for tool in git mvn jlink tar xz zip unzip; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "device-prepare: missing ${missing[*]} (Debian: apt-get install git maven openjdk-17-jdk-headless tar xz-utils zip unzip)" >&2
  exit 2
fi
cd "$(dirname "$0")/../.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"   # a worktree's .git is a file
mkdir -p "$(dirname "$exclude")"   # a clone made without git's templates has no info/
grep -qx "/.device/" "$exclude" 2>/dev/null || echo "/.device/" >> "$exclude"
rm -rf runtime-image/target/lib runtime-image/target/tensorlane-runtime-*.jar   # no stale jars or manifest class paths
# offline first (fast, no registry round trips); on a fresh machine (nothing downloaded yet) the same build online
build=(-pl crd,contract,kernels,hack/testkit,runtime-image install -DskipTests -Dtensorlane.skipImages)
mvn -B -o -q "${build[@]}" || { echo "device-prepare: offline build failed; building online" >&2; mvn -B -q "${build[@]}"; }
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/app/lib"
# The production image's module list (hack/images.sh, one source of truth) and its exclusion of java.desktop's natives.
# No jlink compression: xz does better over the whole tree.
modules=$(awk '/^MODULES=/{f=1} f{print} f&&!/\\$/{exit}' hack/images.sh | sed 's/^MODULES=//; s/\\$//' | tr -d '\n')
excludes=$(sed -n "s/^DESKTOP_NATIVES='\(.*\)'$/\1/p" hack/images.sh)
[ -n "$modules" ] && [ -n "$excludes" ] || { echo "device-prepare: no MODULES/DESKTOP_NATIVES in hack/images.sh" >&2; exit 1; }
jlink --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --exclude-files="$excludes" --output "$stage/jre"
cp runtime-image/target/tensorlane-runtime-0.1.0-SNAPSHOT.jar "$stage/app/"
# kubernetes-client-api, -model-common and tensorlane-crd: picocli reflects on the probe command's fields at start-up;
# api/gson/commons-compress/slf4j-api: what DJL's tokenizers binding needs; vertx/netty: serve's HTTP server; jinjava and
# its guava/re2j/commons-*/java-ipv6/javassist/jackson-datatype/-yaml/snakeyaml/big-math/immutables: chat
# templates; micrometer/prometheus/HdrHistogram/LatencyUtils: metrics; automaton (dk.brics): structured outputs
for j in jackson-annotations jackson-core jackson-databind jcuda-12 jcuda-natives jcublas jna- picocli tensorlane-kernels tensorlane-contract \
  kubernetes-client-api kubernetes-model-common tensorlane-crd tokenizers- api- gson- commons-compress slf4j-api \
  vertx-core netty- jinjava guava failureaccess re2j commons-lang3 commons-net java-ipv6 javassist \
  jackson-datatype jackson-dataformat-yaml snakeyaml big-math immutables-exceptions commons-io commons-codec \
  micrometer prometheus HdrHistogram LatencyUtils automaton-; do
  cp runtime-image/target/lib/$j*.jar "$stage/app/lib/"
done
# The lent GPU machines are H200s: the kernels jar carries fatbins of sm_90 SASS only (the full build's six architectures
# and PTX would push the bundle past what the device tool carries). DEVICE_SASS (90) picks another architecture.
nvcc_bin=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
kjar=$(ls "$stage"/app/lib/tensorlane-kernels-*.jar)
fb=$(mktemp -d)
mkdir -p "$fb/io/tensorlane/kernels"
sass=${DEVICE_SASS:-90}
for cu in tl_model tl_allreduce; do
  a=$sass; [ "$cu" = tl_model ] && [ "$sass" = 90 ] && a=90a   # the model kernels' wgmma: sm_90a, as build-fatbin.sh
  "$nvcc_bin" -std=c++17 -O3 -fatbin -gencode "arch=compute_$a,code=sm_$a" \
    "kernels/src/main/cuda/$cu.cu" -o "$fb/io/tensorlane/kernels/$cu.fatbin"
done
(cd "$fb" && zip -q "$kjar" io/tensorlane/kernels/tl_model.fatbin io/tensorlane/kernels/tl_allreduce.fatbin)
rm -rf "$fb"
# only the natives the engine loads: linux-x86_64 for tokenizers and JNA, JCuda's driver and runtime bindings
zip -q -d "$stage"/app/lib/tokenizers-*.jar 'native/lib/osx-*' 'native/lib/linux-aarch64/*' 'native/lib/win-*' >/dev/null
zip -q -d "$stage"/app/lib/jcuda-natives-*.jar 'lib/libJNvPTXCompiler-*' 'lib/libJNvrtc-*' >/dev/null
jna=$(ls "$stage"/app/lib/jna-*.jar)
unzip -Z1 "$jna" | grep -E '^com/sun/jna/[^/]+/[^/]*jnidispatch' | grep -v '/linux-x86-64/' | xargs zip -q -d "$jna" >/dev/null
if command -v strip >/dev/null; then
  strip --strip-unneeded "$stage/jre/lib/server/libjvm.so"
  t=$(mktemp -d); so=native/lib/linux-x86_64/cpu/libtokenizers.so; jar=$(ls "$stage"/app/lib/tokenizers-*.jar)
  (cd "$t" && unzip -q "$jar" "$so" && strip --strip-unneeded "$so" && zip -q "$jar" "$so")
  rm -rf "$t"
fi
rm -rf .device && mkdir -p .device
tar -C "$stage" -cf - jre app | xz -T0 -6 > .device/bundle.tar.xz
tree_kib=$(git ls-files -z | du -c --files0-from=- -k | tail -1 | cut -f1)
device_kib=$(du -sk .device | cut -f1)
echo "working tree ~$((tree_kib / 1024)) MiB + .device $((device_kib / 1024)) MiB (the device tool carries at most 64 MiB)"
