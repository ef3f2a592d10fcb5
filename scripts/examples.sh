#!/usr/bin/env bash
# Builds the Examples/ package (which depends on this package by path and uses only its public API)
# and runs both programs: password-recovery in process, and server-recovery against a reference
# server this script starts on 127.0.0.1 (SQLite, a free port, everything in a temporary directory).
# Exits non-zero if either program fails. `make check` (CI) runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# The root package's scratch path: the dependencies `make test` compiled are reused, and switching
# the root package recompiles only our own library targets (about 20 s each way, measured), where a
# scratch path of its own meant a cold build of NIO and BoringSSL (about 5 min on 2 cores).
scratch="$root/.build"
swift build --package-path Examples --scratch-path "$scratch"
swift build --product share-recovery

echo "examples.sh: password-recovery" >&2
"$scratch/debug/password-recovery"

. scripts/temporary-server.sh
start_temporary_server "$root/.build/debug/share-recovery" examples.sh

echo "examples.sh: server-recovery against http://127.0.0.1:$port" >&2
"$scratch/debug/server-recovery" "http://127.0.0.1:$port" "$work/server.sqlite.webhook-secret" "$work/otp.jsonl"
echo "examples.sh: both examples passed" >&2
