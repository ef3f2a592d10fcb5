#!/usr/bin/env bash
# Builds the Examples/ package (which depends on this package by path and uses only its public API)
# and runs its programs: the README's "Use it as a library" snippet (extracted here into the
# readme-snippet target, so a README that no longer compiles fails), password-recovery in process,
# eip1559-transfer, whose signed Ethereum transaction eth-account decodes (in the venv of
# scripts/verify-venv.sh, by scripts/check-eip1559-transfer.py), and server-recovery against a
# reference server this script starts on 127.0.0.1 (SQLite, a free port, everything in a temporary
# directory). Exits non-zero if any of them fails. `make check` (CI) runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The root package's scratch path: the dependencies `make test` compiled are reused, and switching
# the root package recompiles only our own library targets (about 20 s each way, measured), where a
# scratch path of its own meant a cold build of NIO and BoringSSL (about 5 min on 2 cores).
scratch="$root/.build"

# The first ```swift block after the heading "## Use it as a library", as a program of its own.
snippet_dir=Examples/Sources/readme-snippet
mkdir -p "$snippet_dir"
awk '
    /^## / { in_section = ($0 == "## Use it as a library") }
    in_section && !done && /^```swift$/ { in_block = 1; next }
    in_block && /^```$/ { in_block = 0; done = 1 }
    in_block { print }
' README.md > "$snippet_dir/main.swift.new"
if [ ! -s "$snippet_dir/main.swift.new" ]; then
    rm -f "$snippet_dir/main.swift.new"
    echo 'examples.sh: README.md has no ```swift block under "## Use it as a library"' >&2
    exit 1
fi
{
    echo "// Written by scripts/examples.sh from README.md (\"Use it as a library\"); edit the README, not this file."
    cat "$snippet_dir/main.swift.new"
} > "$snippet_dir/main.swift"
rm "$snippet_dir/main.swift.new"

swift build --package-path Examples --scratch-path "$scratch"
swift build --product share-recovery

echo "examples.sh: the README's library snippet" >&2
"$scratch/debug/readme-snippet"

echo "examples.sh: password-recovery" >&2
"$scratch/debug/password-recovery"

echo "examples.sh: eip1559-transfer, decoded by eth-account" >&2
. scripts/verify-venv.sh
"$scratch/debug/eip1559-transfer" | tee /dev/stderr | "$venv/bin/python" scripts/check-eip1559-transfer.py /dev/stdin

. scripts/temporary-server.sh
start_temporary_server "$root/.build/debug/share-recovery" examples.sh

echo "examples.sh: server-recovery against http://127.0.0.1:$port" >&2
"$scratch/debug/server-recovery" "http://127.0.0.1:$port" "$work/server.sqlite.webhook-secret" "$work/otp.jsonl"
echo "examples.sh: the README snippet and the three examples passed" >&2
