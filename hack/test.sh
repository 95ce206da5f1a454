#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, idempotently, then runs every test.
#   1. apt packages the tests use (hack/test-deps.sh)
#   2. the local control-plane binaries (hack/k8s-binaries.sh: built once per machine, then cached)
#   3. mvn -B verify over all modules (unit, schema, real-apiserver and image tests)
# Extra arguments go to Maven, e.g. hack/test.sh -pl operator -am
set -euo pipefail
cd "$(dirname "$0")/.."
hack/test-deps.sh
hack/k8s-binaries.sh >/dev/null
exec mvn -B verify "$@"
