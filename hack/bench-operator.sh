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
# one reactor build, nothing installed into ~/.m2: the sibling modules resolve to their target/classes; each module writes
# its test classpath to its own target/ (the operator's is the one used)
mvn -B -q -o -pl crd,contract,hack/testkit,operator -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-classpath.txt >&2
CP=$(cat operator/target/bench-classpath.txt)
# shellcheck disable=SC2086
exec java -Xmx1g ${BENCH_OPTS:-} -Dtensorlane.repo.root="$ROOT" \
  '-Djava.util.logging.SimpleFormatter.format=%1$tT.%1$tL %4$s %3$s %5$s%6$s%n' \
  -cp "operator/target/test-classes:operator/target/classes:$CP" \
  io.tensorlane.operator.bench.OperatorBench "${1:-all}"
