#!/usr/bin/env bash
# The README's test command (`make test`): the whole functional suite, both storage backends, real
# sockets, every vector, without sanitizers, so it fits before every commit. Our targets build with
# warnings as errors; the PostgreSQL tests get a throwaway server (scripts/test-postgres.sh).
# The slow checks (sanitizers, the examples package, the documentation) are `make check`.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1
started=$SECONDS
. scripts/test-postgres.sh
swift build --build-tests
built=$SECONDS
# Serially: on 2 cores, CPU-bound tests would otherwise hold the cooperative pool and stall the
# deadlines that the network tests measure.
swift test --skip-build --no-parallel
echo "test.sh: build $((built - started)) s, tests $((SECONDS - built)) s" >&2
