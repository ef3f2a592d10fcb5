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
. scripts/events-venv.sh
# The independent ECDSA verifier and eth-account for ECDSALifecycleCLITests (the venv of
# scripts/independent-verify.sh and scripts/examples.sh, so `make check` installs it once).
. scripts/verify-venv.sh
swift build --build-tests
built=$SECONDS
# Two passes. First the targets that only compute in process (no socket, child process, file lock
# or time limit), in parallel: they use both cores and nothing of theirs waits on a deadline. Then the
# rest serially: on 2 cores, CPU-bound tests would otherwise hold the cooperative pool and stall the
# deadlines that the network and process tests measure (ShareRecoveryTests in parallel exceeds the
# single-flight test's time limit). docs/testing.md says where the time goes.
# Every test is a Swift Testing test: --disable-xctest spares the empty XCTest run, whose closing
# "Executed 0 tests" line would read as a run that tested nothing.
in_process='^(ShareCryptoTests|RecoveryKitTests)\.'
swift test --skip-build --disable-xctest --parallel --filter "$in_process"
swift test --skip-build --disable-xctest --no-parallel --skip "$in_process"
echo "test.sh: build $((built - started)) s, tests $((SECONDS - built)) s" >&2
