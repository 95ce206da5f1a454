#!/usr/bin/env bash
# Prepares .device/ (ignored by git; carried to the GPU machine with carry: [".device"]): a jlinked JRE and the runtime
# jar with only the libraries the engine's commands need (most of the probe's Kubernetes client stays behind to fit the
# 64 MiB carry; the tokenizers jar keeps only its linux-x86_64 native library).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx "/.device/" .git/info/exclude 2>/dev/null || echo "/.device/" >> .git/info/exclude
rm -rf runtime-image/target/lib runtime-image/target/tensorlane-runtime-*.jar   # no stale jars or manifest class paths
mvn -B -o -q -pl kernels,runtime-image install -DskipTests -Dtensorlane.skipImages
rm -rf .device && mkdir -p .device/app/lib
jlink --add-modules java.base,java.logging,java.management,jdk.unsupported,jdk.httpserver --strip-debug --no-man-pages --no-header-files \
  --compress=2 --output .device/jre
cp runtime-image/target/tensorlane-runtime-0.1.0-SNAPSHOT.jar .device/app/
# kubernetes-client-api, -model-common and tensorlane-crd: picocli reflects on the probe command's fields at start-up;
# api/gson/commons-compress/slf4j-api: what DJL's tokenizers binding needs; vertx/netty: serve's HTTP server; jinjava and
# its guava/re2j/commons-*/java-ipv6/javassist: chat templates; micrometer/prometheus/HdrHistogram/LatencyUtils: metrics
for j in jackson-annotations jackson-core jackson-databind jcuda-12 jcuda-natives jcublas jna- picocli tensorlane-kernels \
  kubernetes-client-api kubernetes-model-common tensorlane-crd tokenizers- api- gson- commons-compress slf4j-api \
  vertx-core netty- jinjava guava failureaccess re2j commons-lang3 commons-net java-ipv6 javassist \
  micrometer prometheus HdrHistogram LatencyUtils; do
  cp runtime-image/target/lib/$j*.jar .device/app/lib/
done
# only the natives the engine loads: the tokenizers library for linux-x86_64, JCuda's driver and runtime bindings
zip -q -d .device/app/lib/tokenizers-*.jar 'native/lib/osx-*' 'native/lib/linux-aarch64/*' 'native/lib/win-*' >/dev/null
zip -q -d .device/app/lib/jcuda-natives-*.jar 'lib/libJNvPTXCompiler-*' 'lib/libJNvrtc-*' >/dev/null
# native symbols the GPU runs never need (the device tool carries at most 64 MiB with the working tree)
if command -v strip >/dev/null; then
  strip --strip-unneeded .device/jre/lib/server/libjvm.so
  t=$(mktemp -d); so=native/lib/linux-x86_64/cpu/libtokenizers.so; jar=$(ls "$PWD"/.device/app/lib/tokenizers-*.jar)
  (cd "$t" && unzip -q "$jar" "$so" && strip --strip-unneeded "$so" && zip -q "$jar" "$so")
  rm -rf "$t"
fi
du -sh .device
tree_kib=$(git ls-files -z | du -c --files0-from=- -k | tail -1 | cut -f1)
device_kib=$(du -sk .device | cut -f1)
echo "working tree ~$((tree_kib / 1024)) MiB + .device $((device_kib / 1024)) MiB (the device tool carries at most 64 MiB)"
