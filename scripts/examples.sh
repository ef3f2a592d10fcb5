#!/usr/bin/env bash
# Builds the Examples/ package (which depends on this package by path and uses only its public API)
# and runs both programs: password-recovery in process, and server-recovery against a reference
# server this script starts on 127.0.0.1 (SQLite, a free port, everything in a temporary directory).
# Exits non-zero if either program fails. `make check` (CI) runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Its own scratch path: the examples are another root package, so sharing .build would make each
# build invalidate the other's products.
scratch="$root/.build-examples"
swift build --package-path Examples --scratch-path "$scratch"
swift build --product share-recovery

echo "examples.sh: password-recovery" >&2
"$scratch/debug/password-recovery"

work=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# serve prints {"listening":…,"port":N} once it accepts connections.
"$root/.build/debug/share-recovery" serve --port 0 --database "$work/server.sqlite" --otp-file "$work/otp.jsonl" \
    > "$work/serve.out" 2> "$work/serve.err" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
    port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/serve.out" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; echo "examples.sh: the server did not start" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "examples.sh: the server printed no port within 30 s" >&2; exit 1; }

echo "examples.sh: server-recovery against http://127.0.0.1:$port" >&2
"$scratch/debug/server-recovery" "http://127.0.0.1:$port" "$work/server.sqlite.webhook-secret" "$work/otp.jsonl"
echo "examples.sh: both examples passed" >&2
