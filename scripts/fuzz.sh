#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (docs/fuzzing.md).
#
#   scripts/fuzz.sh TARGET SECONDS [RUNS]   one target for at most SECONDS (and at most RUNS inputs)
#   scripts/fuzz.sh all SECONDS [RUNS]      every target in turn, each with the same budget
#   scripts/fuzz.sh build [TARGET...]       build only
#
# FUZZ_JOBS=N runs N processes of the target side by side on one corpus, each with 1/N of the runs;
# the executions reported are their sum (default 1).
#
# Targets: the fuzzTargets list of Package.swift, without the fuzz- prefix (cipher-text, slip39, ...).
# Prints, per target, executions, executions per second, crashes, corpus size and time, and
# appends the same line to fuzz-out/results.tsv. Exits 1 when any target crashed; the crashing
# input is in fuzz-out/artifacts/TARGET/ (reproduce: the binary with that file as its argument).
set -euo pipefail
cd "$(dirname "$0")/.."

# The one list of targets is Package.swift's fuzzTargets; each entry names its product "fuzz-NAME".
mapfile -t all_targets < <(grep -oE '"fuzz-[a-z0-9-]+", "[A-Za-z0-9]+"' Package.swift | sed -E 's/^"fuzz-([a-z0-9-]+)".*/\1/')
[ "${#all_targets[@]}" -gt 0 ] || { echo "fuzz.sh: no fuzz targets found in Package.swift" >&2; exit 1; }
scratch=.build-fuzz
out=fuzz-out

usage() { sed -n '2,12p' "$0" >&2; exit 2; }

build() {
    local products=()
    for target in "$@"; do products+=(--product "fuzz-$target"); done
    # The fuzz targets exist only with SHARE_RECOVERY_FUZZ=1 (Package.swift). Release, so each
    # execution is fast; every Swift module gets coverage instrumentation and ASan.
    for product in "${products[@]}"; do
        [ "$product" = --product ] && continue
        SHARE_RECOVERY_FUZZ=1 swift build -c release --scratch-path "$scratch" --product "$product" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld >&2
    done
}

run() {
    local target=$1 seconds=$2 runs=$3
    local binary corpus artifacts log
    binary=$(SHARE_RECOVERY_FUZZ=1 swift build -c release --scratch-path "$scratch" --show-bin-path)/fuzz-$target
    corpus=$out/corpus/$target
    artifacts=$out/artifacts/$target
    log=$out/logs/$target.log
    mkdir -p "$corpus" "$artifacts" "$out/logs"
    local extra=()
    # Allocation stacks only matter in a crash report, and a crash replays with the defaults;
    # recording one per malloc was ~15 % of a target's time.
    local asan_options=${ASAN_OPTIONS:-malloc_context_size=0} rss_limit=2048 segment=$runs
    if [ "$target" = server-requests ]; then
        # The in-process server keeps state across inputs (SQLite pages, connection pools, rate-limit
        # windows), and the globals of Swift's async top-level code are invisible to LeakSanitizer,
        # so per-input leak checks there report only noise. The other targets keep them.
        extra+=(-detect_leaks=0)
        asan_options=${ASAN_OPTIONS:-detect_leaks=0:malloc_context_size=0}
        # HummingbirdTesting's router framework makes a NIOAsyncTestingChannel per request and never
        # closes it (~7 KB per input): the process runs in segments of 500k inputs, each a fresh
        # process continuing from the corpus, under a 6 GB limit.
        rss_limit=6144
        segment=500000
    fi
    # SWIFT_BACKTRACE: Swift's own crash handler would race libFuzzer's and ASan's on a crash.
    export SWIFT_BACKTRACE=enable=no
    local before after status=0 started ended now execs rate total=0 left budget
    # A slow-unit file is an input that took over 10 s (libFuzzer's report), not a failure: on a
    # starved core a harmless input can. Timeouts (-timeout=10), crashes, leaks and OOMs count.
    before=$(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l)
    started=$(date +%s)
    while :; do
        now=$(date +%s)
        budget=$((seconds - (now - started)))
        left=$segment
        if [ "$runs" -ge 0 ]; then
            [ "$total" -lt "$runs" ] || break
            if [ "$left" -lt 0 ] || [ $((runs - total)) -lt "$left" ]; then left=$((runs - total)); fi
        fi
        [ "$budget" -gt 0 ] || break
        # One thread per process, FUZZ_JOBS processes (each its own log, stats and share of the runs)
        # sharing the corpus: libFuzzer rereads the corpus directory, so one process's finds reach
        # the others. New inputs go to the corpus directory (the first one given); the seeds
        # directory is read only.
        local job pids=() per_job=$left
        if [ "$left" -ge 0 ]; then per_job=$(((left + jobs - 1) / jobs)); fi
        for ((job = 0; job < jobs; job++)); do
            ASAN_OPTIONS=$asan_options "$binary" -max_total_time="$budget" -runs="$per_job" -timeout=10 \
                -rss_limit_mb="$rss_limit" -print_final_stats=1 "${extra[@]}" \
                -artifact_prefix="$artifacts/" "$corpus" "$out/seeds/$target" >"$log.$job" 2>&1 &
            pids+=($!)
        done
        for ((job = 0; job < jobs; job++)); do
            wait "${pids[$job]}" || status=$?
            execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.$job" | tail -1)
            total=$((total + ${execs:-0}))
        done
        # Only segmented targets go round again (until the time or the runs are used up); a failed
        # segment ends the run. Replaying the corpus at a segment's start counts as executions.
        [ "$status" -eq 0 ] && [ "$segment" != "$runs" ] || break
    done
    ended=$(date +%s)
    after=$(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l)
    local corpus_size crashes
    rate=$((total / ((ended - started) > 0 ? (ended - started) : 1)))
    corpus_size=$(find "$corpus" -type f | wc -l)
    crashes=$((after - before))
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes="exit-$status"; fi
    local line
    line=$(printf '%s\t%s\texecs=%s\texecs/s=%s\tcrashes=%s\tcorpus=%s\ttime=%ss' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$target" "$total" "$rate" "$crashes" "$corpus_size" "$((ended - started))")
    echo "$line"
    echo "$line" >>"$out/results.tsv"
    [ "$crashes" = 0 ]
}

[ $# -ge 1 ] || usage
case "$1" in
build)
    shift
    [ $# -gt 0 ] || set -- "${all_targets[@]}"
    build "$@"
    exit 0
    ;;
all) targets=("${all_targets[@]}") ;;
*)
    [[ " ${all_targets[*]} " == *" $1 "* ]] || usage
    targets=("$1")
    ;;
esac
[ $# -ge 2 ] || usage
seconds=$2
runs=${3:--1}
jobs=${FUZZ_JOBS:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || usage

python3 scripts/fuzz-seeds.py "$out/seeds" >&2
build "${targets[@]}"
failed=0
for target in "${targets[@]}"; do
    run "$target" "$seconds" "$runs" || failed=1
done
exit "$failed"
