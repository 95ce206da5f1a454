#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, idempotently, then runs every test.
#   1. apt packages the tests use (hack/test-deps.sh)
#   2. the local control-plane binaries (hack/k8s-binaries.sh: built once per machine, then cached) and
#      Kubernetes 1.36's CRD API server (hack/crd-apiserver.sh: likewise; the CRD suite runs on 1.20 and 1.36)
#   3. mvn -B verify over all modules (unit, schema, real-apiserver and image tests; the formatter's check)
# Extra arguments go to Maven, e.g. hack/test.sh -pl operator -am
# hack/test.sh --unit [maven args]: only the unit tests (*Test, not *ClusterTest/*E2ETest/*IT: hack/README.md "Tests"),
# no control plane, no images: a few minutes
set -euo pipefail
cd "$(dirname "$0")/.."
hack/test-deps.sh
if [ "${1:-}" = "--unit" ]; then
  shift
  exec mvn -B test -Dtest='*Test,!*ClusterTest,!*E2ETest' -Dsurefire.failIfNoSpecifiedTests=false "$@"
fi
hack/k8s-binaries.sh >/dev/null
hack/crd-apiserver.sh >/dev/null
exec mvn -B verify "$@"
