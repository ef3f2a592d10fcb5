#!/usr/bin/env bash
# The fleet test (`make check`, docs/testing.md "The fleet test"): a production-shaped deployment on
# this host, everything on 127.0.0.1 and stopped when the script exits.
#
#   - a durable PostgreSQL (.ci/postgres.sh --durable), its database empty;
#   - three `share-recovery serve --migrate` processes started at once: one migrates under the advisory
#     lock, the others wait for it (--database-lock-timeout 60), and all three become ready;
#   - their clocks skewed by libfaketime: one +2 s, one -2 s, one exact (PostgreSQL's clock decides);
#   - HAProxy in the foreground, round-robin, `option forwardfor` (X-Forwarded-For), the servers started
#     with --trusted-proxy 127.0.0.1/32;
#   - one-time-code flows through HAProxy from distinct client addresses, a token issued by one process
#     used on the others, the per-identifier flow limit held across the fleet;
#   - one process killed with SIGKILL, then every process restarted one by one while requests go on:
#     no 5xx through HAProxy;
#   - `share-recovery audit verify` on the database at the end.
#
# Installs haproxy and faketime with apt-get when missing. FLEET_SERVER=<binary> uses a built
# share-recovery instead of building it (scripts/check.sh passes none: it builds here).
set -euo pipefail
cd "$(dirname "$0")/.."
begun=$SECONDS
log() { echo "fleet-test.sh: $*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

missing=()
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v faketime >/dev/null 2>&1 || missing+=(faketime)
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
haproxy=$(command -v haproxy || echo /usr/sbin/haproxy)

binary=${FLEET_SERVER:-}
if [ -z "$binary" ]; then
    swift build --product share-recovery
    binary="$(swift build --show-bin-path)/share-recovery"
fi

work=$(mktemp -d)
pids=()
haproxy_pid=""
pg_dir=""
cleanup() {
    local i
    for i in "${!pids[@]}"; do signal_server "$i" KILL; done
    if [ -n "$haproxy_pid" ]; then kill -9 "$haproxy_pid" 2> /dev/null || true; wait "$haproxy_pid" 2> /dev/null || true; fi
    if [ -n "$pg_dir" ]; then .ci/postgres.sh stop "$pg_dir" >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A durable cluster of its own, whatever other tests use.
eval "$(.ci/postgres.sh --durable | sed 's/SHARE_RECOVERY_TEST_POSTGRES_/FLEET_PG_/')"
pg_dir=$FLEET_PG_DIR
database=$FLEET_PG_URL
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/master-key"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/webhook-secret"
chmod 600 "$work/master-key" "$work/webhook-secret"

free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$(((RANDOM % 30000) + 20000))
        if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
skews=("+2s" "-2s" "")
ports=()
for i in 0 1 2; do ports+=("$(free_port)"); done
front=$(free_port)

start_server() {
    local i=$1 prefix=(env)
    # The process's own clock is skewed; PostgreSQL's is not. (libfaketime preloaded by hand, without
    # the faketime program, made serve exit at start; the program forks: signal_server finds the child.)
    if [ -n "${skews[$i]}" ]; then prefix=(faketime -f "${skews[$i]}"); fi
    "${prefix[@]}" "$binary" serve --port "${ports[$i]}" --database "$database" --migrate \
        --database-lock-timeout 60 --master-key-file "$work/master-key" \
        --webhook-secret-file "$work/webhook-secret" --otp-file "$work/otp.jsonl" \
        --trusted-proxy 127.0.0.1/32 --drain-seconds 1 > "$work/serve-$i.out" 2>> "$work/serve-$i.err" &
    pids[$i]=$!
}
signal_server() { # signal_server <i> <signal>: the server itself, under faketime's fork too
    local child
    child=$(pgrep -P "${pids[$1]}" || true)
    kill "-$2" ${child:-} "${pids[$1]}" 2> /dev/null || true
    wait "${pids[$1]}" 2> /dev/null || true
    # faketime may return before its child has closed the port.
    while [ -n "$child" ] && kill -0 "$child" 2> /dev/null; do sleep 0.1; done
}
wait_ready() {
    local i=$1
    for _ in $(seq 1 900); do
        if curl -fsS "http://127.0.0.1:${ports[$i]}/ready" > /dev/null 2>&1; then return 0; fi
        kill -0 "${pids[$i]}" 2> /dev/null || { cat "$work/serve-$i.err" >&2; fail "server $i exited"; }
        sleep 0.1
    done
    cat "$work/serve-$i.err" >&2
    fail "server $i not ready within 90 s"
}

log "starting three servers at once on an empty database (clocks ${skews[*]}exact)"
for i in 0 1 2; do start_server "$i"; done
for i in 0 1 2; do wait_ready "$i"; done
migrated=$(PGPASSWORD="" psql "$database" -Atc "SELECT COUNT(*) FROM schema_migrations")
[ "$migrated" -gt 0 ] || fail "schema_migrations is empty"
log "all three ready; $migrated migrations applied once"

# The skew is real: each process's clock as libfaketime makes it.
for i in 0 1; do
    offset=$(($(faketime -f "${skews[$i]}" date +%s) - $(date +%s)))
    case "${skews[$i]}" in +2s) [ "$offset" -ge 1 ] ;; -2s) [ "$offset" -le -1 ] ;; esac ||
        fail "faketime ${skews[$i]} gave an offset of $offset s"
done

cat > "$work/haproxy.cfg" << EOF
global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
    option forwardfor
frontend fleet
    bind 127.0.0.1:$front
    default_backend servers
backend servers
    balance roundrobin
    option httpchk GET /ready
    default-server inter 500ms fall 1 rise 1
    server s0 127.0.0.1:${ports[0]} check
    server s1 127.0.0.1:${ports[1]} check
    server s2 127.0.0.1:${ports[2]} check
EOF
"$haproxy" -db -f "$work/haproxy.cfg" > "$work/haproxy.log" 2>&1 &
haproxy_pid=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$front/health" > /dev/null 2>&1 && break
    kill -0 "$haproxy_pid" 2> /dev/null || { cat "$work/haproxy.log" >&2; fail "haproxy exited"; }
    sleep 0.1
done
url="http://127.0.0.1:$front"

# status <file> <curl args...>: the HTTP status, the body in <file>.
request() {
    local out=$1
    shift
    curl -sS -o "$out" -w '%{http_code}\n' "$@"
}
flow() { # flow <identifier> <client address> <purpose>: prints the flow id
    local status
    status=$(request "$work/flow.json" -X POST "$url/recovery/flows" -H 'Content-Type: application/json' \
        -H "X-Forwarded-For: $2" -d "{\"identifier\":\"$1\",\"purpose\":\"$3\"}")
    [ "$status" = 201 ] || fail "flow for $1 answered $status: $(cat "$work/flow.json")"
    sed -n 's/.*"flowId" *: *"\([0-9a-f]*\)".*/\1/p' "$work/flow.json"
}
code_of() { # the code the fleet wrote for a flow (one OTP file for all three)
    grep "\"flowId\":\"$1\"" "$work/otp.jsonl" | tail -n 1 | sed -n 's/.*"code":"\([0-9]*\)".*/\1/p'
}

log "a token issued through one process is honoured by the others"
id="fleet-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
flow_id=$(flow "$id" 198.51.100.1 recover)
status=$(request "$work/verify.json" -X POST "$url/recovery/flows/$flow_id/verify" \
    -H 'Content-Type: application/json' -d "{\"code\":\"$(code_of "$flow_id")\"}")
[ "$status" = 200 ] || fail "verify answered $status: $(cat "$work/verify.json")"
token=$(sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p' "$work/verify.json")
for i in 0 1 2; do
    status=$(request /dev/null "http://127.0.0.1:${ports[$i]}/users/$id/recovery-methods" -H "Authorization: Bearer $token")
    [ "$status" = 200 ] || fail "server $i (clock ${skews[$i]:-exact}) refused the token: $status"
done

log "new flows for one identifier, raced across the fleet from distinct addresses: the limit holds"
race="race-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
for n in $(seq 1 12); do
    request "$work/race-$n.json" -X POST "$url/recovery/flows" -H 'Content-Type: application/json' \
        -H "X-Forwarded-For: 203.0.113.$n" -d "{\"identifier\":\"$race\",\"purpose\":\"recover\"}" > "$work/race-$n.status" &
done
wait_jobs() { local job; for job in $(jobs -p); do [ "$job" = "$haproxy_pid" ] || case " ${pids[*]} " in *" $job "*) ;; *) wait "$job" ;; esac; done; }
wait_jobs
created=$(cat "$work"/race-*.status | grep -c '^201$' || true)
limited=$(cat "$work"/race-*.status | grep -c '^429$' || true)
[ "$created" -eq 5 ] && [ "$limited" -eq 7 ] ||
    fail "12 concurrent flows for one identifier: $created created, $limited limited (want 5 and 7): $(cat "$work"/race-*.status | tr '\n' ' ')"

log "SIGKILL of server 1 (clock -2 s), then a rolling restart of all three under load: no 5xx through HAProxy"
: > "$work/load.status"
load() {
    while [ -e "$work/load.on" ]; do
        request /dev/null "$url/users/$id/recovery-methods" -H "Authorization: Bearer $token" >> "$work/load.status" 2> /dev/null || true
    done
}
touch "$work/load.on"
load &
load_pid=$!
signal_server 1 KILL
sleep 1
start_server 1
wait_ready 1
for i in 0 1 2; do
    signal_server "$i" TERM
    start_server "$i"
    wait_ready "$i"
    sleep 1
done
rm -f "$work/load.on"
wait "$load_pid"
answered=$(grep -c . "$work/load.status" || true)
errors=$(grep -c '^5' "$work/load.status" || true)
[ "$errors" -eq 0 ] || fail "$errors of $answered requests through HAProxy answered 5xx during the restarts"
[ "$answered" -gt 0 ] || fail "no request went through during the restarts"
log "$answered requests during the kill and restarts, none 5xx"

"$binary" audit verify --database "$database" > "$work/verify.out" || fail "audit verify: $(cat "$work/verify.out")"
log "audit verify: $(cat "$work/verify.out")"
log "passed in $((SECONDS - begun)) s"
