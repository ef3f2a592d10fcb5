#!/usr/bin/env bash
# Runs the whole test suite, then again under ASan and TSan (scripts/sanitizers.sh): our targets
# build with warnings as errors, and the PostgreSQL tests get
# a throwaway server on 127.0.0.1 (.ci/postgres.sh installs and starts it; if it cannot, those tests
# say SKIPPED loudly and the rest still run).
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1
if [ -z "${SHARE_RECOVERY_TEST_POSTGRES_URL:-}" ]; then
    if exports=$(.ci/postgres.sh); then
        eval "$exports"
        trap '.ci/postgres.sh stop "$SHARE_RECOVERY_TEST_POSTGRES_DIR" || true' EXIT
    else
        echo "WARNING: PostgreSQL could not be started; its tests will say SKIPPED" >&2
    fi
fi
swift build --build-tests
# Serially: on 2 cores, CPU-bound tests would otherwise hold the cooperative pool and stall the
# deadlines that the network tests measure.
swift test --skip-build --no-parallel
# The same suite under AddressSanitizer and ThreadSanitizer, each in its own scratch path.
scripts/sanitizers.sh
