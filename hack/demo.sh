#!/usr/bin/env bash
# Tensorlane demo on this machine: a real Kubernetes 1.20 control plane, simulated GPU nodes, the operator.
#
#   hack/demo.sh            build what is missing, start everything, apply the samples, show what a user sees;
#                           refreshes every 15 s until Ctrl-C, which cleans everything up
#   hack/demo.sh --detach   the same, but print once and return (leave it running)
#   hack/demo.sh down       stop the operator, the simulator and the control plane (by PID)
#
# TENSORLANE_DEMO_BUILD=0 skips building the operator (uses operator/target/quarkus-app as it is).
#
# First run on a machine builds kube-apiserver/controller-manager/scheduler 1.20.2 (hack/k8s-binaries.sh,
# 10-15 min on 2 cores, cached afterwards); later runs start in well under a minute.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE="${TENSORLANE_STATE_DIR:-${TMPDIR:-/tmp}/tensorlane-local-cluster-$(id -un)}"
DEMO="${STATE}-demo"          # outside the cluster's state dir, which `local-cluster.sh down` deletes
SAMPLES_NS=tensorlane-demo
SIM_NS=tensorlane-sim
OP_NS=tensorlane-system
export TENSORLANE_STATE_DIR="$STATE" TENSORLANE_REPO="$ROOT"

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
log() { echo "[demo] $*" >&2; }
die() { echo "[demo] ERROR: $*" >&2; exit 1; }

stop_pidfile() { # stop the process recorded in $1 (if it still runs the expected command)
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q "$2" "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  say "stopping"
  stop_pidfile "$DEMO/operator.pid" quarkus-run.jar
  stop_pidfile "$DEMO/sim.pid" tensorlane-testkit
  stop_pidfile "$DEMO/hub.pid" tensorlane-testkit
  "$ROOT/hack/local-cluster.sh" down || true
  log "logs of the last run: $DEMO"
}

if [ "${1:-}" = down ]; then down; exit 0; fi
DETACH=false
[ "${1:-}" = --detach ] && DETACH=true

for tool in java mvn kubectl; do
  command -v $tool >/dev/null || die "'$tool' is missing: apt-get install openjdk-17-jdk-headless maven kubectl"
done
mkdir -p "$DEMO"

say "1/7 Kubernetes binaries (built once per machine, then verified from the cache)"
BIN=$("$ROOT/hack/k8s-binaries.sh" | tail -1)
log "$BIN"

say "2/7 building the testkit (control-plane launcher + GPU node simulator)"
JAR=$("$ROOT/hack/local-cluster.sh" jar)
log "$JAR"

say "3/7 control plane: etcd, kube-apiserver (RBAC), kube-controller-manager, kube-scheduler on 127.0.0.1"
t0=$(date +%s)
KUBECONFIG=$("$ROOT/hack/local-cluster.sh" up | tail -1)
export KUBECONFIG
log "up after $(( $(date +%s) - t0 )) s; KUBECONFIG=$KUBECONFIG"
if ! $DETACH; then trap 'down; exit 130' INT TERM; fi
trap 'log "a step failed; what is running stays up for inspection: hack/demo.sh down cleans up"' ERR

say "4/7 CRDs and install manifests"
kubectl apply --server-side --force-conflicts -k "$ROOT/manifests/crds" >&2
# kubectl wait errors out (instead of waiting) while a fresh CRD has no conditions yet: retry for up to 60 s
for i in $(seq 1 120); do
  kubectl wait --for=condition=Established --timeout=30s crd/inferencedeployments.tensorlane.io \
    crd/gputopologies.tensorlane.io >/dev/null 2>&1 && break
  [ "$i" = 120 ] && die "the CRDs did not become Established"
  sleep 0.5
done
log "CRDs Established"
OPERATOR_SA=""
if [ -f "$ROOT/manifests/overlays/dev/kustomization.yaml" ]; then
  if kubectl apply --server-side --force-conflicts -k "$ROOT/manifests/overlays/dev" >"$DEMO/install.log" 2>&1; then
    log "applied manifests/overlays/dev (RBAC, operator Deployment, probe DaemonSet)"
    # No kubelet runs real containers here: the operator runs below as a local process instead, authenticated
    # as its ServiceAccount, so its in-cluster Deployment is scaled to zero.
    kubectl -n "$OP_NS" scale deployment/tensorlane-operator --replicas=0 >&2 || true
    kubectl -n "$OP_NS" get serviceaccount tensorlane-operator >/dev/null 2>&1 && OPERATOR_SA=tensorlane-operator
  else
    log "manifests/overlays/dev did not apply (see $DEMO/install.log):"; tail -5 "$DEMO/install.log" >&2
  fi
else
  log "manifests/overlays/dev not there yet: CRDs only"
fi

say "5/7 simulated GPU nodes (topology fixtures; the simulator plays the kubelet)"
stop_pidfile "$DEMO/sim.pid" tensorlane-testkit
kubectl create namespace "$SIM_NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$SIM_NS" create configmap tensorlane-sim-rules --from-file=rules.yaml="$ROOT/hack/demo/sim-rules.yaml" \
  --dry-run=client -o yaml | kubectl apply -f - >/dev/null
java -XX:+UseSerialGC -Xmx256m -jar "$JAR" sim --kubeconfig "$KUBECONFIG" --namespace "$SIM_NS" --download-seconds 45 \
  --node gpu-pcie-0=rtx-pro-6000-pcie-8 --node gpu-nvlink-0=h200-sxm-8 --node gpu-nvlink-1=h200-sxm-8 \
  --node gpu-l40s-0=l40s-2 --node gpu-l40s-1=l40s-2 --node gpu-l40s-2=l40s-2 --node gpu-4090-0=rtx-4090-4 \
  >"$DEMO/sim.log" 2>&1 &
echo $! >"$DEMO/sim.pid"
for _ in $(seq 1 120); do
  grep -q "running; rules" "$DEMO/sim.log" && break
  kill -0 "$(cat "$DEMO/sim.pid")" 2>/dev/null || { tail -20 "$DEMO/sim.log" >&2; die "the simulator exited"; }
  sleep 0.5
done
log "simulator pid $(cat "$DEMO/sim.pid"), log $DEMO/sim.log; rules: hack/demo/sim-rules.yaml"
# the samples name Hub models; a loopback Hub serves their config.json and safetensors headers (no weights)
stop_pidfile "$DEMO/hub.pid" tensorlane-testkit
rm -f "$DEMO/hub.endpoint"
java -XX:+UseSerialGC -Xmx128m -jar "$JAR" hub --port 0 >"$DEMO/hub.endpoint" 2>"$DEMO/hub.log" &
echo $! >"$DEMO/hub.pid"
for _ in $(seq 1 60); do
  [ -s "$DEMO/hub.endpoint" ] && break
  kill -0 "$(cat "$DEMO/hub.pid")" 2>/dev/null || { tail -20 "$DEMO/hub.log" >&2; die "the local Hub exited"; }
  sleep 0.5
done
HUB_ENDPOINT=$(head -1 "$DEMO/hub.endpoint")
log "local Hub pid $(cat "$DEMO/hub.pid") at $HUB_ENDPOINT (the sample models, header-only)"

say "6/7 operator"
OP_JAR="$ROOT/operator/target/quarkus-app/quarkus-run.jar"
stop_pidfile "$DEMO/operator.pid" quarkus-run.jar
if [ "${TENSORLANE_DEMO_BUILD:-1}" != 0 ] && { [ ! -f "$OP_JAR" ] || [ -n "$(find "$ROOT/operator/src/main" "$ROOT/crd/src/main" "$ROOT/contract/src/main" -newer "$OP_JAR" -print -quit 2>/dev/null)" ]; }; then
  log "building the operator (mvn package -pl operator -am; log $DEMO/build-operator.log)"
  (cd "$ROOT" && { mvn -B -q -o -pl operator -am package -DskipTests >"$DEMO/build-operator.log" 2>&1 \
      || mvn -B -q -pl operator -am package -DskipTests >>"$DEMO/build-operator.log" 2>&1; }) \
    || log "operator build failed (tail of $DEMO/build-operator.log):$(echo; tail -5 "$DEMO/build-operator.log")"
fi
if [ -f "$OP_JAR" ]; then
  OP_KUBECONFIG="$KUBECONFIG"
  if [ -n "$OPERATOR_SA" ]; then
    # least privilege for real: the operator authenticates as its ServiceAccount (TokenRequest API)
    OP_KUBECONFIG="$DEMO/operator.kubeconfig"
    cp "$KUBECONFIG" "$OP_KUBECONFIG"
    KUBECONFIG="$OP_KUBECONFIG" kubectl config set-credentials "$OPERATOR_SA" \
      --token="$(kubectl -n "$OP_NS" create token "$OPERATOR_SA" --duration=24h)" >/dev/null
    KUBECONFIG="$OP_KUBECONFIG" kubectl config set-context --current --user="$OPERATOR_SA" --namespace="$OP_NS" >/dev/null
    log "operator authenticates as system:serviceaccount:$OP_NS:$OPERATOR_SA"
  else
    log "operator runs with the admin kubeconfig (no ServiceAccount installed yet)"
  fi
  # run a copy: a rebuild of operator/ while the demo runs must not pull the jars from under it
  rm -rf "$DEMO/operator-app" && cp -r "$(dirname "$OP_JAR")" "$DEMO/operator-app"
  KUBECONFIG="$OP_KUBECONFIG" POD_NAMESPACE="$OP_NS" TENSORLANE_RUNTIME_IMAGE="tensorlane/tensorlane-runtime:0.1.0" \
    TENSORLANE_MODEL_HUB_ENDPOINT="$HUB_ENDPOINT" java -Xmx256m -jar "$DEMO/operator-app/quarkus-run.jar" >"$DEMO/operator.log" 2>&1 &
  echo $! >"$DEMO/operator.pid"
  log "operator pid $(cat "$DEMO/operator.pid"), log $DEMO/operator.log"
else
  log "operator not built yet: showing the cluster, the simulated nodes and the samples without it"
fi

say "7/7 samples (namespace $SAMPLES_NS)"
kubectl create namespace "$SAMPLES_NS" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
if [ -d "$ROOT/manifests/samples" ]; then
  kubectl -n "$SAMPLES_NS" apply -k "$ROOT/manifests/samples" >&2 || log "samples did not apply"
fi

show() {
  say "what a user sees ($(date -u +%H:%M:%S) UTC)"
  kubectl get nodes -L nvidia.com/gpu.product,nvidia.com/gpu.count,tensorlane.io/gpu-interconnect 2>&1
  echo; kubectl get gputopology 2>&1
  echo; kubectl get infd -A 2>&1
  echo; kubectl get deployments,pods -n "$SAMPLES_NS" -o wide 2>&1
  echo; kubectl get events -n "$SAMPLES_NS" --sort-by=.lastTimestamp 2>&1 | tail -12
  if [ -f "$DEMO/operator.pid" ] && ! kill -0 "$(cat "$DEMO/operator.pid")" 2>/dev/null; then
    echo; log "the operator exited; tail of $DEMO/operator.log:"; tail -15 "$DEMO/operator.log"
  fi
}

sleep 10
show
cat >&2 <<MSG

Try:  export KUBECONFIG=$KUBECONFIG
      kubectl -n $SAMPLES_NS describe infd llama-3-3-70b-pcie
      # the seed's OOM: force a fraction that leaves too little for the non-static memory (auto is 0.95 there)
      kubectl -n $SAMPLES_NS patch infd llama-3-3-70b-pcie --type merge -p '{"spec":{"memory":{"fraction":"0.97"}}}'
Logs: $DEMO (operator.log, sim.log) and $STATE/logs (control plane)
MSG
if $DETACH; then
  log "left running; stop with: hack/demo.sh down"
  exit 0
fi
log "refreshing every 15 s; Ctrl-C stops and cleans up"
while true; do sleep 15; show; done
