#!/usr/bin/env bash
# Operator benchmarks (issues 4 and 5) against the local Kubernetes 1.20 control plane with simulated GPU nodes.
# Not part of the test run. Prints figures only ("[bench] RESULT ..." lines).
#
#   hack/bench-operator.sh [scale|oom|all]      (default all)
#   BENCH_OPTS="-Dbench.deployments=1000 -Dbench.nodes=200 -Dbench.noop-seconds=60 -Dbench.oom-runs=50"
#
# With TENSORLANE_KUBECONFIG set (eval "$(hack/local-cluster.sh env)") it attaches to that cluster; otherwise it starts
# its own for the run. The operator runs in-process (JOSDK Operator API, the same reconcilers the Quarkus app runs).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mvn -B -q -o -pl crd,hack/testkit install -DskipTests >&2
mvn -B -q -o -pl operator test-compile >&2
CP_FILE=$(mktemp)
trap 'rm -f "$CP_FILE"' EXIT
mvn -B -q -o -pl operator dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$CP_FILE" >&2
# shellcheck disable=SC2086
exec java -Xmx1g ${BENCH_OPTS:-} -Dtensorlane.repo.root="$ROOT" \
  '-Djava.util.logging.SimpleFormatter.format=%1$tT.%1$tL %4$s %3$s %5$s%6$s%n' \
  -cp "operator/target/test-classes:operator/target/classes:$(cat "$CP_FILE")" \
  io.tensorlane.operator.bench.OperatorBench "${1:-all}"
