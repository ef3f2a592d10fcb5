#!/usr/bin/env bash
# The slow checks (`make check`), which CI runs after the README's test command (`make test`):
#   0. swift format lint --strict with the repository's .swift-format (scripts/format-lint.sh);
#   1. the suite under AddressSanitizer, then ThreadSanitizer, our own targets instrumented
#      (scripts/sanitizers.sh; docs/sanitizers.md says what runs under which);
#   2. the Examples/ package: built against the root package by path, its programs run, the EIP-1559
#      transfer decoded by eth-account, server-recovery against a reference server this script
#      starts (scripts/examples.sh);
#   3. the DocC documentation of every library target, with no warning (scripts/docs.sh);
#   4. every signature checked by verifiers that know nothing of this project: PyNaCl, coincurve,
#      cryptography and eth-keys in a venv from PyPI (scripts/independent-verify.sh);
#   5. docs/openapi.yaml against a started server, by schemathesis from PyPI with real credentials
#      (scripts/conformance.sh, about five minutes);
#   6. the fleet test: three `serve` processes with skewed clocks on one durable PostgreSQL behind
#      HAProxy, raced across processes, killed and restarted under load, the audit trail verified at
#      the end (scripts/fleet-test.sh, docs/testing.md "The fleet test"; a minute or two);
#   7. a compile-only build of share-recovery with the OTLP trait (`serve` exporting spans over
#      OTLP/HTTP, docs/server.md "Tracing"), in the plain .build, the share-recovery product only.
# The conformance run is bounded by time, not work (35 s per group), so it runs in the background
# while 3, 4, 6 and 7 build and verify, against a copy of the server binary their builds cannot replace;
# its output is printed when it ends. Run alone it is one of the longest steps of CI.
# Each step prints its own timing; any failure fails the run.
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
step "format lint" scripts/format-lint.sh
step "sanitizers" scripts/sanitizers.sh
step "examples" scripts/examples.sh

# The conformance run in the background (above): the plain server binary, built by the examples step,
# copied out of .build.
conformance=$(mktemp -d)
conformance_pid=""
stop_conformance() {
    # Its own process group (setsid, below): schemathesis and the server stop with it.
    if [ -n "$conformance_pid" ]; then kill -- "-$conformance_pid" 2>/dev/null || true; wait "$conformance_pid" 2>/dev/null || true; fi
    rm -rf "$conformance"
}
# This replaces scripts/test-postgres.sh's trap, so it stops that PostgreSQL too.
trap 'stop_conformance; stop_test_postgres' EXIT
swift build --product share-recovery
cp "$(swift build --show-bin-path)/share-recovery" "$conformance/share-recovery"
echo "check.sh: API conformance, in the background (its output follows when it ends)" >&2
conformance_begun=$SECONDS
CONFORMANCE_SERVER="$conformance/share-recovery" setsid scripts/conformance.sh > "$conformance/log" 2>&1 &
conformance_pid=$!

step "documentation" scripts/docs.sh
step "independent signature verification" scripts/independent-verify.sh
# The plain product built above, before the OTLP build below replaces it.
step "fleet test" env FLEET_SERVER="$(swift build --show-bin-path)/share-recovery" scripts/fleet-test.sh
# The product that serves: the trait's code (ServerTracing) compiled and linked; the tests and the bench,
# which the trait does not change, are not rebuilt.
step "OTLP trait build" swift build --traits OTLP --product share-recovery

echo "check.sh: waiting for API conformance" >&2
conformance_status=0
wait "$conformance_pid" || conformance_status=$?
conformance_pid=""
cat "$conformance/log" >&2
if [ "$conformance_status" -ne 0 ]; then
    echo "check.sh: API conformance failed (exit $conformance_status)" >&2
    exit 1
fi
echo "check.sh: API conformance took $((SECONDS - conformance_begun)) s, in the background" >&2
echo "check.sh: all slow checks passed in $((SECONDS - started)) s" >&2
