#!/usr/bin/env bash
# Runs the whole test suite: our targets build with warnings as errors, PostgreSQL tests get a
# throwaway server on 127.0.0.1 when one can be started.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1
if [ -x .ci/postgres.sh ] && [ -z "${SHARE_RECOVERY_TEST_POSTGRES_URL:-}" ]; then
    if url=$(.ci/postgres.sh start); then
        export SHARE_RECOVERY_TEST_POSTGRES_URL="$url"
        trap '.ci/postgres.sh stop || true' EXIT
    else
        echo "WARNING: PostgreSQL could not be started; its tests will say SKIPPED" >&2
    fi
fi
swift build --build-tests
swift test --skip-build
