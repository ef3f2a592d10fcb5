# Sourced by scripts/examples.sh and scripts/conformance.sh: `start_temporary_server <binary> <name>
# [serve options...]` starts a reference server on 127.0.0.1 (SQLite, a free port, everything in a fresh temporary
# directory) and sets `work` (that directory: server.sqlite, its .webhook-secret, otp.jsonl,
# metrics.token),
# `server_pid` and `port`; the server is stopped and the directory removed when the script exits.
start_temporary_server() {
    local binary=$1 name=$2
    shift 2
    work=$(mktemp -d)
    server_pid=""
    trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
    # Stopped by a signal (scripts/check.sh stops a background conformance run so), bash would skip the
    # EXIT trap: exiting runs it.
    trap 'exit 130' INT
    trap 'exit 143' TERM
    # serve prints {"listening":…,"port":N} once it accepts connections.
    # A metrics token too, so that GET /metrics can be exercised (conformance.sh).
    # Created here, not by the background job's redirection, so that the first read cannot miss it.
    : > "$work/serve.out"
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/metrics.token"
    "$binary" serve --port 0 --database "$work/server.sqlite" --otp-file "$work/otp.jsonl" \
        --metrics-token-file "$work/metrics.token" "$@" > "$work/serve.out" 2> "$work/serve.err" &
    server_pid=$!
    port=""
    for _ in $(seq 1 300); do
        port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/serve.out" | head -n 1)
        [ -n "$port" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; echo "$name: the server did not start" >&2; exit 1; }
        sleep 0.1
    done
    echo "$name: the server printed no port within 30 s" >&2
    exit 1
}
