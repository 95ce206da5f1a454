#!/usr/bin/env bash
# Prepares .device/ (ignored by git; carried to the GPU machine): a jlinked JRE and the runtime jar with only the
# libraries the engine's commands need (most of the probe's Kubernetes client stays behind to fit the 64 MiB carry).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx "/.device/" .git/info/exclude 2>/dev/null || echo "/.device/" >> .git/info/exclude
mvn -B -o -q -pl kernels,runtime-image install -DskipTests -Dtensorlane.skipImages
rm -rf .device && mkdir -p .device/app/lib
jlink --add-modules java.base,java.logging,jdk.unsupported --strip-debug --no-man-pages --no-header-files --compress=2 --output .device/jre
cp runtime-image/target/tensorlane-runtime-0.1.0-SNAPSHOT.jar .device/app/
# kubernetes-client-api, -model-common and tensorlane-crd: picocli reflects on the probe command's fields at start-up
for j in jackson-annotations jackson-core jackson-databind jcuda-12 jcuda-natives jna- picocli tensorlane-kernels kubernetes-client-api kubernetes-model-common tensorlane-crd; do
  cp runtime-image/target/lib/$j*.jar .device/app/lib/
done
du -sh .device
