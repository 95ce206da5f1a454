#!/usr/bin/env bash
# The local Kubernetes 1.20 control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler on
# 127.0.0.1) that the tests and the demo use. One code path: this script runs the testkit's Java launcher
# (io.tensorlane.testkit.LocalControlPlane), the same one the JUnit extension runs in-process.
#
#   hack/local-cluster.sh up       start (detached); prints the kubeconfig path on the last line
#   hack/local-cluster.sh down     stop every process by PID, delete the state
#   hack/local-cluster.sh status   exit 0 when it runs and answers /readyz
#   hack/local-cluster.sh env      print `export KUBECONFIG=… TENSORLANE_KUBECONFIG=…` (use: eval "$(… env)")
#   hack/local-cluster.sh jar      print the path of the launcher jar (built when missing or stale)
#
# State: $TENSORLANE_STATE_DIR (default /tmp/tensorlane-local-cluster-$USER): state.json (PIDs), kubeconfig,
# pki/, logs/<process>.log. Binaries: hack/k8s-binaries.sh (cached in ~/.cache/tensorlane/k8s-1.20.2) or
# $TENSORLANE_K8S_BIN.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="${TENSORLANE_STATE_DIR:-${TMPDIR:-/tmp}/tensorlane-local-cluster-$(id -un)}"
TESTKIT="$ROOT/hack/testkit"

log() { echo "[local-cluster] $*" >&2; }
die() { echo "[local-cluster] ERROR: $*" >&2; exit 1; }

need() {
  command -v "$1" >/dev/null || die "'$1' not found. Install it first: $2"
}

# The launcher jar, rebuilt when any testkit or crd source is newer than it.
testkit_jar() {
  local jar
  jar=$(ls "$TESTKIT"/target/tensorlane-testkit-*-cli.jar 2>/dev/null | head -1 || true)
  if [ -z "$jar" ] || [ -n "$(find "$TESTKIT/src/main" "$TESTKIT/pom.xml" "$ROOT/crd/src/main" "$ROOT/contract/src/main" "$ROOT/pom.xml" -newer "$jar" -print -quit 2>/dev/null)" ]; then
    need mvn "apt-get install maven (and a JDK 17: apt-get install openjdk-17-jdk-headless)"
    log "building the testkit launcher (mvn package -pl crd,hack/testkit -am)"
    # the testkit needs crd and the pure-Java contract module, no CUDA build
    local flags=(-B -q -pl crd,hack/testkit -am package -DskipTests)
    (cd "$ROOT" && { mvn -o "${flags[@]}" >/dev/null 2>&1 || mvn "${flags[@]}" >&2; }) || die "building hack/testkit failed"
    jar=$(ls "$TESTKIT"/target/tensorlane-testkit-*-cli.jar | head -1)
  fi
  echo "$jar"
}

launcher() {
  need java "apt-get install openjdk-17-jdk-headless"
  local jar
  jar=$(testkit_jar) || exit 1
  java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$jar" "$@" --state-dir "$STATE"
}

cmd="${1:-}"
case "$cmd" in
  up)
    mkdir -p "$STATE"
    export TENSORLANE_REPO="$ROOT"
    launcher up
    ;;
  down)
    if [ -f "$STATE/state.json" ]; then launcher down; else log "not running (no $STATE/state.json)"; fi
    ;;
  status)
    [ -f "$STATE/state.json" ] || { log "not running (no $STATE/state.json)"; exit 1; }
    launcher status
    ;;
  env)
    [ -f "$STATE/kubeconfig" ] || die "not running: run hack/local-cluster.sh up first"
    echo "export KUBECONFIG='$STATE/kubeconfig' TENSORLANE_KUBECONFIG='$STATE/kubeconfig'"
    ;;
  jar)
    testkit_jar
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
