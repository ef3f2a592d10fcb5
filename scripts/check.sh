#!/usr/bin/env bash
# The slow checks (`make check`), which CI runs after the README's test command (`make test`):
#   1. the suite under AddressSanitizer, then ThreadSanitizer, our own targets instrumented
#      (scripts/sanitizers.sh; docs/sanitizers.md says what runs under which);
#   2. the Examples/ package: built against the root package by path, both executables run, the
#      second against a reference server this script starts (scripts/examples.sh);
#   3. the DocC documentation of every library target, with no warning (scripts/docs.sh);
#   4. every signature checked by verifiers that know nothing of this project: PyNaCl and coincurve
#      in a venv from PyPI (scripts/independent-verify.sh);
#   5. docs/openapi.yaml against a started server, by schemathesis from PyPI with real credentials
#      (scripts/conformance.sh, about four minutes);
#   6. a compile-only build with the OTLP trait (`serve` exporting spans over OTLP/HTTP, docs/server.md
#      "Tracing"), in the plain .build: 159 s measured on top of a built tree (swift-otel, SwiftProtobuf).
# Each step prints its own timing; any failure stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1
started=$SECONDS
# The sanitizer passes run the PostgreSQL tests too.
. scripts/test-postgres.sh
step() {
    local name=$1
    shift
    local begun=$SECONDS
    echo "check.sh: $name" >&2
    "$@"
    echo "check.sh: $name took $((SECONDS - begun)) s" >&2
}
step "sanitizers" scripts/sanitizers.sh
step "examples" scripts/examples.sh
step "documentation" scripts/docs.sh
step "independent signature verification" scripts/independent-verify.sh
step "API conformance" scripts/conformance.sh
step "OTLP trait build" swift build --traits OTLP
echo "check.sh: all slow checks passed in $((SECONDS - started)) s" >&2
