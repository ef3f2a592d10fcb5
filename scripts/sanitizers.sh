#!/usr/bin/env bash
# The test suite under AddressSanitizer and ThreadSanitizer (STYLE.md: sanitizer runs in their own
# scratch paths). `make check` (scripts/check.sh) runs it after `make test`; CI runs both.
#
#   scripts/sanitizers.sh            address, then thread
#   scripts/sanitizers.sh address    one of them
#
# Any sanitizer report fails the run: halt_on_error makes the first report abort the test process,
# and `swift test` then exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
export SHARE_RECOVERY_WERROR=1

# Scope: the whole suite under both. Measured on the 2-core machine while others were building
# (docs/sanitizers.md): cold ASan build 18.5 min + tests 2-3 min, cold TSan build 14 min + tests
# 3.7 min; with the normal ~11.5 min that is ~50 min of CI's 90, so nothing is cut, and the store
# crash test keeps its 200 trials (25 s under TSan).

run() {
    local sanitizer=$1 scratch
    case "$sanitizer" in address) scratch=.build-asan ;; thread) scratch=.build-tsan ;; esac
    local started=$SECONDS
    echo "sanitizers: building the tests with -sanitize=$sanitizer in $scratch" >&2
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    local built=$SECONDS
    echo "sanitizers: running the tests under $sanitizer" >&2
    # Serially, as in scripts/test.sh.
    swift test --skip-build --no-parallel --sanitize="$sanitizer" --scratch-path "$scratch"
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
# The same for the faulty-network trials (FaultyNetworkTests): 20 of each operation per backend.
export SHARE_RECOVERY_FAULT_TRIALS=${SHARE_RECOVERY_FAULT_TRIALS:-20}

if [ $# -eq 0 ]; then set -- address thread; fi
for sanitizer in "$@"; do
    case "$sanitizer" in
    address | thread) run "$sanitizer" ;;
    *) echo "usage: $0 [address|thread]..." >&2; exit 2 ;;
    esac
done
