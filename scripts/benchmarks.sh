#!/usr/bin/env bash
# Writes docs/benchmarks.md from a recovery-bench run: `scripts/benchmarks.sh` builds recovery-bench
# in release mode and runs it in full (about a minute, plus the build); `--quick` makes it the
# tests' shorter run; `scripts/benchmarks.sh FILE.json` writes the page from the JSON of an earlier
# run (`recovery-bench --json FILE`) without running anything. The page says which it was, when, and
# on what machine (scripts/benchmarks.py); `--note TEXT` adds what the JSON cannot know, such as
# other work sharing the machine. For the PostgreSQL rows, name a server first, e.g.
# `eval "$(.ci/postgres.sh --durable)"`.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=()
json=""
note=()
while [ $# -gt 0 ]; do
    argument=$1
    shift
    case "$argument" in
        --quick) quick=(--quick) ;;
        --note)
            [ $# -gt 0 ] || { echo "benchmarks.sh: --note needs a text" >&2; exit 2; }
            note=(--note "$1")
            shift
            ;;
        -h | --help)
            sed -n '2,8s/^# \{0,1\}//p' "$0"
            exit 0
            ;;
        -*)
            echo "benchmarks.sh: unknown option $argument (see --help)" >&2
            exit 2
            ;;
        *) json=$argument ;;
    esac
done

if [ -z "$json" ]; then
    swift build -c release --product recovery-bench
    json=$(mktemp --suffix=.json)
    trap 'rm -f "$json"' EXIT
    "$(swift build -c release --show-bin-path)/recovery-bench" "${quick[@]}" --json "$json"
elif [ ${#quick[@]} -gt 0 ]; then
    echo "benchmarks.sh: --quick runs the bench, so it cannot go with an existing JSON file" >&2
    exit 2
fi

python3 scripts/benchmarks.py "$json" docs/benchmarks.md "${note[@]}"
echo "benchmarks.sh: wrote docs/benchmarks.md" >&2
