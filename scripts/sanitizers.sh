#!/usr/bin/env bash
# The test suite under AddressSanitizer and ThreadSanitizer. `make check` (scripts/check.sh) runs it
# after `make test`; CI runs both.
#
#   scripts/sanitizers.sh            address, then thread
#   scripts/sanitizers.sh address    one of them
#
# Any sanitizer report fails the run: halt_on_error makes the first report abort the test process,
# and `swift test` then exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1
. scripts/events-venv.sh

# Only our own targets are instrumented (SHARE_RECOVERY_SANITIZE, read by Package.swift): they are
# recompiled in the plain scratch path, where `make test` already compiled the dependencies, so a
# pass costs a recompile of our code instead of a cold build of NIO, BoringSSL and the rest.
# Afterwards .build holds instrumented objects of our targets; the next plain build recompiles them.
# docs/sanitizers.md has the scope, the measured times and what this leaves out.

run() {
    local sanitizer=$1
    local started=$SECONDS
    export SHARE_RECOVERY_SANITIZE=$sanitizer
    echo "sanitizers: building our targets and the tests with -sanitize=$sanitizer" >&2
    swift build --build-tests
    local built=$SECONDS
    echo "sanitizers: running the tests under $sanitizer" >&2
    # Serially, as in scripts/test.sh. Under TSan without CLITests and ECDSAKillTests: those run the
    # CLI as separate processes (each sanitized start-up costs seconds) through code the in-process suites already
    # drive concurrently; ASan runs them all.
    local skip=()
    # Nor the suites where one thread does all the work, so TSan has nothing to find and ASan runs
    # them: the two ECDSA session suites (about 45 s under TSan; TSan still runs the tamper suite),
    # the published vectors and their verifier, and the documents' references.
    if [ "$sanitizer" = thread ]; then
        skip=(--skip CLITests --skip ECDSAKillTests --skip 'ECDSASigning(Session)?Tests'
            --skip 'Vector(File|Verifier)Tests' --skip DocumentReferenceTests)
    fi
    swift test --skip-build --disable-xctest --no-parallel "${skip[@]}"
    echo "sanitizers: $sanitizer: build $((built - started)) s, tests $((SECONDS - built)) s" >&2
}

# halt_on_error: the first report ends the process with a failure instead of being logged and
# forgotten (a plain non-zero exit: abort_on_error would hand the process to Swift's backtracer,
# which can stall for minutes on a sanitized binary). ASan's leak checker stays on, with
# suppressions for toolchain code only.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
# The SIGKILL trials of `store recover` (RecoverKillCLITests) start three sanitized processes per
# trial; 20 trials find what a sanitizer can, and the plain run keeps its 200.
export SHARE_RECOVERY_KILL_TRIALS=${SHARE_RECOVERY_KILL_TRIALS:-20}
# The store crash tests (StoreCrashTests) kill the sanitized harness 40 times instead of 200: what a
# sanitizer finds there shows in a few trials. (RecoveryCrashTests keeps 200: it asserts where its
# kills land, which fewer trials would not reliably cover.)
export SHARE_RECOVERY_CRASH_TRIALS=${SHARE_RECOVERY_CRASH_TRIALS:-40}
# The same for the faulty-network trials (FaultyNetworkTests): 20 of each operation per backend.
export SHARE_RECOVERY_FAULT_TRIALS=${SHARE_RECOVERY_FAULT_TRIALS:-20}
# The PostgreSQL load of ConcurrencyTests: its 64 clients with 50 requests each instead of 200 (the
# concurrency that finds a race stays; the plain run keeps the longer load). It was the slowest suite
# under ASan (72 s).
export SHARE_RECOVERY_CONCURRENT_REQUESTS=${SHARE_RECOVERY_CONCURRENT_REQUESTS:-50}
# The ECDSA load (ECDSALoadTests): 8 devices signing once each at the same time instead of 64 twice;
# 64 pair setups cost minutes under a sanitizer, and eight concurrent sessions still race.
export SHARE_RECOVERY_ECDSA_LOAD_CLIENTS=${SHARE_RECOVERY_ECDSA_LOAD_CLIENTS:-8}
export SHARE_RECOVERY_ECDSA_LOAD_SIGNATURES=${SHARE_RECOVERY_ECDSA_LOAD_SIGNATURES:-1}

if [ $# -eq 0 ]; then set -- address thread; fi
for sanitizer in "$@"; do
    case "$sanitizer" in
    address | thread) run "$sanitizer" ;;
    *) echo "usage: $0 [address|thread]..." >&2; exit 2 ;;
    esac
done
