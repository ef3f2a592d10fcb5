#!/usr/bin/env bash
# The fleet test (`make check`, docs/testing.md "The fleet test"): a production-shaped deployment on
# this host, everything on 127.0.0.1 and stopped when the script exits.
#
#   - a durable PostgreSQL (.ci/postgres.sh --durable), its database empty;
#   - three `share-recovery serve --migrate` processes started at once: one migrates under the advisory
#     lock, the others wait for it (--database-lock-timeout 60), and all three become ready;
#   - their wall clocks skewed by libfaketime: one +2 s, one -2 s, one exact (PostgreSQL's clock
#     decides); their monotonic clocks and timers are left alone (FAKETIME_DONT_FAKE_MONOTONIC=1 and
#     a small preloaded library, below: libfaketime's own timers stalled the server, whose SIGTERM
#     drain then never ended);
#   - HAProxy in the foreground, round-robin, `option forwardfor` (X-Forwarded-For), the servers started
#     with --trusted-proxy 127.0.0.1/32;
#   - a token issued by one process honoured by the others; then races, the requests of each sent to
#     the three processes' own ports in turn, so they land on different processes, each with exactly
#     one winner or its limit held exactly: new flows per identifier (5) and per client address (50),
#     wrong one-time codes (5 counted, the flow then ended, the right code refused), one token of each
#     single-use purpose spent at once (addOrUpdateRecovery, deleteRecovery, removeDevice, eject),
#     one FROST signing nonce, one backup session per account, one Idempotency-Key (one flow, one
#     answer), five device additions with room for two (--max-devices 3);
#   - a process killed (SIGKILL) with a session open on it: a signing session goes on at another
#     process, a backup session is aborted by another and the account opens a new one at a third;
#   - a wallet made by DKG and a FROST signature through HAProxy, verified;
#   - one process killed with SIGKILL, then every process restarted one by one while requests go on:
#     no 5xx through HAProxy (which retries a request whose connection broke, on another server);
#   - no 5xx in any race, and `share-recovery audit verify` on the database at the end.
#
# Every request has a timeout, and the whole run is stopped after FLEET_TIMEOUT seconds (default 900).
# FLEET_KEEP=1 keeps the servers', HAProxy's and the races' files (printed at the end).
# Installs haproxy and faketime with apt-get when missing. FLEET_SERVER=<binary> uses a built
# share-recovery instead of building it (scripts/check.sh passes the one it built).
set -euo pipefail
cd "$(dirname "$0")/.."
begun=$SECONDS
log() { echo "fleet-test.sh: [$((SECONDS - begun)) s] $*" >&2; }
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
watchdog=""
cleanup() {
    local i
    for i in "${!pids[@]}"; do signal_server "$i" KILL; done
    if [ -n "$haproxy_pid" ]; then kill -9 "$haproxy_pid" 2> /dev/null || true; wait "$haproxy_pid" 2> /dev/null || true; fi
    if [ -n "$pg_dir" ]; then .ci/postgres.sh stop "$pg_dir" > /dev/null 2>&1 || true; fi
    if [ -n "$watchdog" ]; then kill "$watchdog" 2> /dev/null || true; wait "$watchdog" 2> /dev/null || true; fi
    if [ -n "${FLEET_KEEP:-}" ]; then log "logs kept in $work"; else rm -rf "$work"; fi
    log "ended after $((SECONDS - begun)) s"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'log "FAILED: stopped by SIGTERM (the watchdog sends it after ${FLEET_TIMEOUT:-900} s)"; exit 143' TERM
# The watchdog: no step may hang the run. Every request and command below has its own timeout too.
(
    trap 'kill "$nap" 2> /dev/null; exit 0' TERM
    sleep "${FLEET_TIMEOUT:-900}" &
    nap=$!
    wait "$nap"
    kill -TERM $$
) &
watchdog=$!

# A durable cluster of its own, whatever other tests use.
eval "$(timeout 120 .ci/postgres.sh --durable | sed 's/SHARE_RECOVERY_TEST_POSTGRES_/FLEET_PG_/')"
pg_dir=$FLEET_PG_DIR
database=$FLEET_PG_URL
sql() { PGCONNECT_TIMEOUT=10 timeout 30 psql "$database" -Atc "$1"; }
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/master-key"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/webhook-secret"
chmod 600 "$work/master-key" "$work/webhook-secret"

. scripts/free-port.sh
skews=("+2s" "-2s" "")
max_devices=3 # the primary device and two more
# libfaketime moves the absolute deadlines given to timerfd_settime by the skew even when it leaves the
# monotonic clock alone, so the +2 s process's event loop timers fired at once, again and again (a
# core's worth of CPU), and the -2 s one's 2 s late. This library, preloaded before it, passes the
# call to the kernel unchanged. (With the monotonic clock faked too, the timers never fired.)
cat > "$work/timerfd.c" << 'SOURCE'
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
}
SOURCE
# Any C compiler: the system's, or the clang that comes with the Swift toolchain.
compiler=${CC:-$(command -v cc || command -v gcc || command -v clang || true)}
[ -n "$compiler" ] || fail "no C compiler for the timerfd library (install gcc, or set CC)"
"$compiler" -shared -fPIC -O2 -o "$work/timerfd.so" "$work/timerfd.c" || fail "cannot build the timerfd library (set CC)"
ports=()
for i in 0 1 2; do ports+=("$(free_port)"); done
front=$(free_port)

start_server() {
    local i=$1 prefix=(env)
    # The process's wall clock is skewed; PostgreSQL's is not. The faketime program forks the server
    # (libfaketime preloaded by hand, the server lost its arguments): signal_server signals the child.
    if [ -n "${skews[$i]}" ]; then
        prefix=(env LD_PRELOAD="$work/timerfd.so" FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f "${skews[$i]}")
    fi
    # In a subshell whose stderr is /dev/null: bash's notice of a job killed by a signal goes there.
    (
        "${prefix[@]}" "$binary" serve --port "${ports[$i]}" --database "$database" --migrate \
            --database-lock-timeout 60 --master-key-file "$work/master-key" \
            --webhook-secret-file "$work/webhook-secret" --otp-file "$work/otp.jsonl" \
            --trusted-proxy 127.0.0.1/32 --max-devices "$max_devices" --drain-seconds 1 \
            > "$work/serve-$i.out" 2>> "$work/serve-$i.err"
        exit $? # a second command, so that bash forks serve instead of becoming it
    ) 2> /dev/null &
    pids[$i]=$!
}
server_pid() { # the serve process itself: the last of the subshell's line of children (faketime's)
    local pid=${pids[$1]} child
    while child=$(pgrep -P "$pid" | head -n 1) && [ -n "$child" ]; do pid=$child; done
    echo "$pid"
}
signal_server() { # signal_server <i> <signal>: signals serve, waits for it (KILL after 30 s)
    local server
    server=$(server_pid "$1")
    kill "-$2" "$server" 2> /dev/null || true
    for _ in $(seq 1 300); do
        kill -0 "$server" 2> /dev/null || kill -0 "${pids[$1]}" 2> /dev/null || break
        sleep 0.1
    done
    if kill -0 "$server" 2> /dev/null; then
        log "server $1 still runs 30 s after SIG$2: killed"
        kill -9 "$server" 2> /dev/null || true
    fi
    # faketime and the subshell exit with it; the subshell is reaped here.
    if kill -0 "${pids[$1]}" 2> /dev/null; then sleep 0.2; kill -9 "${pids[$1]}" 2> /dev/null || true; fi
    wait "${pids[$1]}" 2> /dev/null || true
}
curl_options=(--silent --show-error --connect-timeout 5 --max-time 30)
wait_ready() {
    local i=$1
    for _ in $(seq 1 900); do
        if curl "${curl_options[@]}" -f "http://127.0.0.1:${ports[$i]}/ready" > /dev/null 2>&1; then return 0; fi
        kill -0 "${pids[$i]}" 2> /dev/null || { cat "$work/serve-$i.err" >&2; fail "server $i exited"; }
        sleep 0.1
    done
    cat "$work/serve-$i.err" >&2
    fail "server $i not ready within 90 s"
}

log "starting three servers at once on an empty database (clocks ${skews[*]}exact)"
for i in 0 1 2; do start_server "$i"; done
for i in 0 1 2; do wait_ready "$i"; done
migrated=$(sql "SELECT COUNT(*) FROM schema_migrations")
[ "$migrated" -gt 0 ] || fail "schema_migrations is empty"
log "all three ready; $migrated migrations applied once"

# The skew is real: each process's clock as libfaketime makes it.
for i in 0 1; do
    offset=$(($(faketime -f "${skews[$i]}" date +%s) - $(date +%s)))
    case "${skews[$i]}" in +2s) [ "$offset" -ge 1 ] ;; -2s) [ "$offset" -le -1 ] ;; esac ||
        fail "faketime ${skews[$i]} gave an offset of $offset s"
done

cat > "$work/haproxy.cfg" << CONFIG
global
    maxconn 512
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    retry-on conn-failure empty-response response-timeout
    option redispatch
    option forwardfor
    option httplog
    log stdout format raw local0
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
CONFIG
"$haproxy" -db -f "$work/haproxy.cfg" > "$work/haproxy.log" 2>&1 &
haproxy_pid=$!
for _ in $(seq 1 100); do
    curl "${curl_options[@]}" -f "http://127.0.0.1:$front/health" > /dev/null 2>&1 && break
    kill -0 "$haproxy_pid" 2> /dev/null || { cat "$work/haproxy.log" >&2; fail "haproxy exited"; }
    sleep 0.1
done
url="http://127.0.0.1:$front"

# request <file> <curl args...>: prints the HTTP status (000: no answer), the body in <file>.
request() {
    local out=$1
    shift
    curl "${curl_options[@]}" -o "$out" -w '%{http_code}\n' "$@" || true
}
json() { # json <file> <key>: a top-level string of a JSON object, or the error's code for key error
    python3 -c 'import json, sys
value = json.load(open(sys.argv[1])).get(sys.argv[2], "")
print(value["code"] if isinstance(value, dict) else value)' "$1" "$2" 2> /dev/null || true
}
random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
echo 0 > "$work/addresses"
next_address() { # a client address not used before (kept in a file: it is called in $(...))
    local n
    n=$(($(cat "$work/addresses") + 1))
    echo "$n" > "$work/addresses"
    echo "198.51.$((n / 250)).$((n % 250 + 1))"
}
flow() { # flow <identifier> <purpose>: prints the flow id, from a client address of its own
    local status
    status=$(request "$work/flow.json" -X POST "$url/recovery/flows" -H 'Content-Type: application/json' \
        -H "X-Forwarded-For: $(next_address)" -d "{\"identifier\":\"$1\",\"purpose\":\"$2\"}")
    [ "$status" = 201 ] || fail "flow for $1 answered $status: $(cat "$work/flow.json")"
    json "$work/flow.json" flowId
}
code_of() { # the code the fleet wrote for a flow (one OTP file for all three)
    grep "\"flowId\":\"$1\"" "$work/otp.jsonl" | tail -n 1 | sed -n 's/.*"code":"\([0-9]*\)".*/\1/p'
}
token_for() { # token_for <identifier> <purpose>: a verified flow's token
    local flow_id status
    flow_id=$(flow "$1" "$2")
    status=$(request "$work/verify.json" -X POST "$url/recovery/flows/$flow_id/verify" \
        -H 'Content-Type: application/json' -d "{\"code\":\"$(code_of "$flow_id")\"}")
    [ "$status" = 200 ] || fail "verify for $1 ($2) answered $status: $(cat "$work/verify.json")"
    json "$work/verify.json" token
}
cli() { # the CLI, bounded in time
    timeout 120 "$binary" "$@"
}

# race <name> <count> <curl args...>: <count> copies of one request at once, the n-th to server n mod 3
# (its own port, so the copies land on different processes): "@SERVER@" in an argument is its base URL,
# "@N@" the copy's number.
# The statuses go to $work/<name>/<n>.status, "<server> <status> <code>" lines to $work/<name>/all.
race() {
    local name=$1 count=$2 n i
    shift 2
    mkdir -p "$work/$name"
    local jobs=()
    for n in $(seq 1 "$count"); do
        i=$((n % 3))
        local args=("${@//@SERVER@/http://127.0.0.1:${ports[$i]}}")
        args=("${args[@]//@N@/$n}")
        request "$work/$name/$n.json" "${args[@]}" > "$work/$name/$n.status" &
        jobs+=($!)
    done
    wait "${jobs[@]}"
    summarize "$name" "$count"
}
summarize() { # summarize <name> <count>: $work/<name>/all, "<server> <status> <error code>" a line
    python3 -c 'import json, sys
directory, count = sys.argv[1], int(sys.argv[2])
for n in range(1, count + 1):
    status = open(f"{directory}/{n}.status").read().strip() or "000"
    try:
        error = json.load(open(f"{directory}/{n}.json")).get("error", {}).get("code", "")
    except Exception:
        error = ""
    print(f"s{n % 3} {status} {error}".rstrip())' "$work/$1" "$2" > "$work/$1/all"
    cat "$work/$1/all" >> "$work/races"
}
count() { awk -v s="$2" '$2 == s' "$work/$1/all" | wc -l | tr -d ' '; }
answers() { sort "$work/$1/all" | uniq -c | awk '{$1 = $1 "x"; print}' | tr '\n' ';'; }
: > "$work/races"

log "a token issued through one process is honoured by the others"
id="fleet-$(random_hex 4)"
token=$(token_for "$id" recover)
for i in 0 1 2; do
    status=$(request /dev/null "http://127.0.0.1:${ports[$i]}/users/$id/recovery-methods" -H "Authorization: Bearer $token")
    [ "$status" = 200 ] || fail "server $i (clock ${skews[$i]:-exact}) refused the token: $status"
done

# flow_race <name> <count> <address> <identifier> <created> <what>: <count> new flows at once, from
# <address> for <identifier> ("@N@" the copy's number in either): exactly <created> 201, the rest 429.
flow_race() {
    race "$1" "$2" -X POST "@SERVER@/recovery/flows" -H 'Content-Type: application/json' \
        -H "X-Forwarded-For: $3" -d "{\"identifier\":\"$4\",\"purpose\":\"recover\"}"
    [ "$(count "$1" 201)" -eq "$5" ] && [ "$(count "$1" 429)" -eq $(($2 - $5)) ] ||
        fail "$2 concurrent flows $6: $(answers "$1") (want $5 x 201, $(($2 - $5)) x 429)"
}
log "race: 12 new flows for one identifier from 12 addresses: 5 created, 7 refused (429)"
flow_race identifier 12 "203.0.113.@N@" "race-$(random_hex 4)" 5 "for one identifier"
log "race: 55 new flows from one client address, each for its own identifier: 50 created, 5 refused (429)"
flow_race address 55 192.0.2.77 "addr-$(random_hex 4)-@N@" 50 "from one address"

log "race: 8 wrong codes at once on one flow: 4 wrong (401), the 5th ends it, the rest 410; the right code then 410"
wrong_id="wrong-$(random_hex 4)"
flow_id=$(flow "$wrong_id" recover)
code=$(code_of "$flow_id")
wrong_code=$(printf '%06d' $(((10#$code + 1) % 1000000)))
race wrong 8 -X POST "@SERVER@/recovery/flows/$flow_id/verify" -H 'Content-Type: application/json' \
    -H "X-Forwarded-For: $(next_address)" -d "{\"code\":\"$wrong_code\"}"
[ "$(count wrong 401)" -eq 4 ] && [ "$(count wrong 410)" -eq 4 ] ||
    fail "8 concurrent wrong codes: $(answers wrong) (want 4 x 401 wrongCode, 4 x 410 flowEnded)"
failed=$(sql "SELECT COUNT(*) FROM audit_events WHERE account = '$wrong_id' AND event = 'otpFailed'")
exhausted=$(sql "SELECT COUNT(*) FROM audit_events WHERE account = '$wrong_id' AND event = 'otpExhausted'")
[ "$failed" -eq 4 ] && [ "$exhausted" -eq 1 ] ||
    fail "the audit trail counts $failed otpFailed and $exhausted otpExhausted (want 4 and 1)"
status=$(request "$work/right.json" -X POST "$url/recovery/flows/$flow_id/verify" -H 'Content-Type: application/json' \
    -H "X-Forwarded-For: $(next_address)" -d "{\"code\":\"$code\"}")
[ "$status" = 410 ] || fail "the right code after five wrong ones answered $status: $(cat "$work/right.json")"

log "race: one Idempotency-Key sent to every process at once: one flow, the same answer"
idem_id="idem-$(random_hex 4)"
key="fleet-$(random_hex 8)"
race idempotent 6 -X POST "@SERVER@/recovery/flows" -H 'Content-Type: application/json' -H "Idempotency-Key: $key" \
    -H "X-Forwarded-For: $(next_address)" -d "{\"identifier\":\"$idem_id\",\"purpose\":\"recover\"}"
flows=$(sql "SELECT COUNT(*) FROM recovery_flows WHERE identifier = '$idem_id'")
[ "$flows" -eq 1 ] || fail "one Idempotency-Key sent 6 times at once made $flows flows: $(answers idempotent)"
[ "$(($(count idempotent 201) + $(count idempotent 409)))" -eq 6 ] && [ "$(count idempotent 201)" -ge 1 ] ||
    fail "one Idempotency-Key sent 6 times at once: $(answers idempotent) (want 201 or 409 requestInProgress)"
awk '$2 == 409 && $3 != "requestInProgress"' "$work/idempotent/all" | grep -q . &&
    fail "a 409 that is not requestInProgress: $(answers idempotent)"
idem_flows=$(for n in $(seq 1 6); do
    if [ "$(cat "$work/idempotent/$n.status")" = 201 ]; then json "$work/idempotent/$n.json" flowId; fi
done | sort -u)
[ "$(echo "$idem_flows" | wc -l)" -eq 1 ] || fail "one Idempotency-Key answered different flows: $idem_flows"
bodies=$(for n in $(seq 1 6); do
    if [ "$(cat "$work/idempotent/$n.status")" = 201 ]; then sha256sum < "$work/idempotent/$n.json"; fi
done | sort -u | wc -l)
[ "$bodies" -eq 1 ] || fail "one Idempotency-Key's 201 answers differ: $(cat "$work"/idempotent/*.json)"
# Once the first has ended, every process replays its answer.
for i in 0 1 2; do
    request "$work/replay.json" -D "$work/replay.headers" -X POST "http://127.0.0.1:${ports[$i]}/recovery/flows" \
        -H 'Content-Type: application/json' -H "Idempotency-Key: $key" -H "X-Forwarded-For: $(next_address)" \
        -d "{\"identifier\":\"$idem_id\",\"purpose\":\"recover\"}" > "$work/replay.status"
    [ "$(cat "$work/replay.status")" = 201 ] && [ "$(json "$work/replay.json" flowId)" = "$idem_flows" ] &&
        grep -qi '^Idempotent-Replayed: true' "$work/replay.headers" ||
        fail "server $i did not replay the kept answer: $(cat "$work/replay.status") $(cat "$work/replay.json")"
done

log "race: one token of each single-use purpose spent on every process at once: one success each"
holder="spend-$(random_hex 4)"
cli keygen --curve ed25519 --wallet-id "$holder" --out "$work/dealt" > /dev/null 2>&1 || fail "keygen failed"
cli custodian keypair --out "$work/custodian" > /dev/null 2>&1 || fail "custodian keypair failed"
random_hex 16 > "$work/password"
cli backup --signing-share "$work/dealt/share-1.json" --signing-share "$work/dealt/share-2.json" --method password \
    --secret-file "$work/password" --custodian-pub "$work/custodian/custodian.pub" --out "$work/backup" > /dev/null 2>&1 ||
    fail "backup failed"
cipher_body="{\"cipherText\":\"$(tr -d '\n' < "$work/backup/cipherText")\"}"
spend=$(token_for "$holder" addOrUpdateRecovery)
race put 6 -X PUT "@SERVER@/users/$holder/user-backup-share?backupMethod=PASSWORD" -H "Authorization: Bearer $spend" \
    -H 'Content-Type: application/json' -d "$cipher_body"
[ "$(count put 204)" -eq 1 ] && [ "$(count put 401)" -eq 5 ] ||
    fail "one addOrUpdateRecovery token spent 6 times at once: $(answers put) (want 1 x 204, 5 x 401)"
spend=$(token_for "$holder" deleteRecovery)
race delete 6 -X DELETE "@SERVER@/users/$holder/user-backup-share?backupMethod=PASSWORD" -H "Authorization: Bearer $spend"
[ "$(count delete 204)" -eq 1 ] && [ "$(($(count delete 401) + $(count delete 404)))" -eq 5 ] ||
    fail "one deleteRecovery token spent 6 times at once: $(answers delete) (want 1 x 204, 5 x 401 or 404)"

log "a wallet by DKG through HAProxy"
owner="owner-$(random_hex 4)"
wallet="wallet-$(random_hex 4)"
token_for "$owner" sign > "$work/sign.token"
cli wallet create --server "$url" --user-id "$owner" --token-file "$work/sign.token" --curve ed25519 \
    --wallet-id "$wallet" --out "$work/device.json" > "$work/wallet.json" 2> "$work/wallet.err" ||
    fail "wallet create: $(cat "$work/wallet.err")"
set_id=$(json "$work/device.json" setId)
public_key=$(json "$work/device.json" publicKey)
sign_token=$(cat "$work/sign.token")
open_signing() { # open_signing <server>: a FROST signing session on that process; its answer in signing.json
    local status
    status=$(request "$work/signing.json" -X POST "http://127.0.0.1:${ports[$1]}/wallets/signing-sessions" \
        -H "Authorization: Bearer $sign_token" -H 'Content-Type: application/json' \
        -d "{\"clientId\":\"$owner\",\"walletId\":\"$wallet\",\"mode\":\"rfc9591\",\"setId\":\"$set_id\"}")
    [ "$status" = 201 ] || fail "signing session on server $1 answered $status: $(cat "$work/signing.json")"
    json "$work/signing.json" sessionId
}
# Round 2 with the custodian's own commitment as the device's: valid points, which is all the server
# checks before it spends its nonce.
sign_body() {
    python3 -c 'import json, sys
answer = json.load(open(sys.argv[1]))
print(json.dumps({"message": "ZmxlZXQgdGVzdA==", "commitment": answer["commitment"]}))' "$work/signing.json"
}

log "race: one signing session's nonce spent on every process at once: one signature share"
session=$(open_signing 0)
race nonce 6 -X POST "@SERVER@/wallets/signing-sessions/$session/sign" -H "Authorization: Bearer $sign_token" \
    -H 'Content-Type: application/json' -d "$(sign_body)"
[ "$(count nonce 200)" -eq 1 ] && [ "$(count nonce 409)" -eq 5 ] &&
    [ "$(awk '$2 == 409 && $3 == "nonceReused"' "$work/nonce/all" | wc -l)" -eq 5 ] ||
    fail "one nonce spent 6 times at once: $(answers nonce) (want 1 x 200, 5 x 409 nonceReused)"
released=$(sql "SELECT COUNT(*) FROM audit_events WHERE account = '$owner' AND event = 'signatureShareReleased' AND detail LIKE '%$session%'")
[ "$released" -eq 1 ] || fail "the audit trail holds $released signatureShareReleased for one session (want 1)"

log "a signing session opened on server 2, which is killed (SIGKILL): it goes on at server 0"
session=$(open_signing 2)
signal_server 2 KILL
status=$(request "$work/continued.json" -X POST "http://127.0.0.1:${ports[0]}/wallets/signing-sessions/$session/sign" \
    -H "Authorization: Bearer $sign_token" -H 'Content-Type: application/json' -d "$(sign_body)")
[ "$status" = 200 ] || fail "the session of the killed process answered $status at server 0: $(cat "$work/continued.json")"
start_server 2
wait_ready 2

log "race: one backup session per account, opened on every process at once: one 201"
backup_token=$(token_for "$owner" addOrUpdateRecovery)
session_body=$(python3 -c 'import json, sys
share = json.load(open(sys.argv[1]))
share.pop("secret", None)
print(json.dumps({"clientId": sys.argv[2], "purpose": "backup", "backupMethod": "PASSWORD",
                  "clientShare": share, "clientKey": sys.argv[3]}))' "$work/device.json" "$owner" "$(random_hex 32)")
race sessions 6 -X POST "@SERVER@/recovery/sessions" -H "Authorization: Bearer $backup_token" \
    -H 'Content-Type: application/json' -d "$session_body"
[ "$(count sessions 201)" -eq 1 ] && [ "$(awk '$2 == 409 && $3 == "operationInProgress"' "$work/sessions/all" | wc -l)" -eq 5 ] ||
    fail "6 backup sessions of one account at once: $(answers sessions) (want 1 x 201, 5 x 409 operationInProgress)"
winner=$(awk '$2 == 201 {print NR}' "$work/sessions/all")
opened_on=$((winner % 3))
session=$(json "$work/sessions/$winner.json" sessionId)

log "the process that opened the backup session is killed (SIGKILL): another aborts it, a third opens anew"
signal_server "$opened_on" KILL
other=$(((opened_on + 1) % 3))
third=$(((opened_on + 2) % 3))
status=$(request "$work/abort.json" -X DELETE "http://127.0.0.1:${ports[$other]}/recovery/sessions/$session" \
    -H "Authorization: Bearer $backup_token")
[ "$status" = 204 ] || fail "aborting the killed process's session at server $other answered $status: $(cat "$work/abort.json")"
status=$(request "$work/reopen.json" -X POST "http://127.0.0.1:${ports[$third]}/recovery/sessions" \
    -H "Authorization: Bearer $backup_token" -H 'Content-Type: application/json' -d "$session_body")
[ "$status" = 201 ] || fail "a new session after the abort answered $status: $(cat "$work/reopen.json")"
status=$(request "$work/abort.json" -X DELETE "http://127.0.0.1:${ports[$other]}/recovery/sessions/$(json "$work/reopen.json" sessionId)" \
    -H "Authorization: Bearer $backup_token")
[ "$status" = 204 ] || fail "aborting the new session answered $status: $(cat "$work/abort.json")"
start_server "$opened_on"
wait_ready "$opened_on"

log "a FROST signature through HAProxy with the wallet's device, verified"
printf 'fleet test %s' "$wallet" > "$work/message"
cli sign --server "$url" --user-id "$owner" --token-file "$work/sign.token" --signing-share "$work/device.json" \
    --message-file "$work/message" > "$work/signature.json" 2> "$work/signature.err" ||
    fail "sign: $(cat "$work/signature.err")"
cli verify --curve ed25519 --public-key "$public_key" --message-file "$work/message" \
    --signature "$(json "$work/signature.json" signature)" > /dev/null 2>&1 || fail "the signature does not verify: $(cat "$work/signature.json")"

log "race: 5 devices approved at once, one CLI per process, $max_devices allowed: $((max_devices - 1)) added"
add_token=$(token_for "$owner" addDevice)
echo "$add_token" > "$work/add.token"
for n in 1 2 3 4 5; do
    cli device add request --key-file "$work/device-$n.key" > "$work/device-$n.request" 2> /dev/null ||
        fail "device add request failed"
done
approvers=()
for n in 1 2 3 4 5; do
    cli device add approve --server "http://127.0.0.1:${ports[$((n % 3))]}" --user-id "$owner" \
        --token-file "$work/add.token" --signing-share "$work/device.json" --device-id "phone-$n" \
        --device-key "$(json "$work/device-$n.request" deviceKey)" > /dev/null 2> "$work/device-$n.err" &
    approvers+=($!)
done
added=0
for n in 1 2 3 4 5; do
    if wait "${approvers[$((n - 1))]}"; then
        added=$((added + 1))
        echo "s$((n % 3)) added" >> "$work/devices"
    else
        echo "s$((n % 3)) $(tr '\n' ' ' < "$work/device-$n.err")" >> "$work/devices"
    fi
done
stored=$(sql "SELECT COUNT(*) FROM audit_events WHERE account = '$owner' AND event = 'deviceAdded'")
refused=$(grep -c deviceLimitReached "$work/devices" || true)
[ "$added" -eq $((max_devices - 1)) ] && [ "$stored" -eq "$added" ] && [ "$refused" -eq $((5 - added)) ] ||
    fail "5 devices approved at once with room for $((max_devices - 1)): $added added, $stored deviceAdded rows," \
        "$refused deviceLimitReached: $(tr '\n' ';' < "$work/devices")"

log "race: one removeDevice token spent on every process at once: one device removed"
removed_device=$(awk '$2 == "added" {print NR; exit}' "$work/devices")
remove_token=$(token_for "$owner" removeDevice)
race remove 6 -X DELETE "@SERVER@/wallets/devices/phone-$removed_device" -H "Authorization: Bearer $remove_token"
[ "$(count remove 204)" -eq 1 ] && [ "$(($(count remove 401) + $(count remove 404)))" -eq 5 ] ||
    fail "one removeDevice token spent 6 times at once: $(answers remove) (want 1 x 204, 5 x 401 or 404)"

log "race: one eject token spent on every process at once: the custodian's share released once"
eject_token=$(token_for "$owner" eject)
race eject 6 -X POST "@SERVER@/wallets/eject" -H "Authorization: Bearer $eject_token" -H 'Content-Type: application/json' \
    -d "{\"clientId\":\"$owner\",\"walletId\":\"$wallet\",\"setId\":\"$set_id\",\"clientKey\":\"$(random_hex 32)\"}"
# The others are refused by whichever check they meet first: the token spent (401), the share gone
# (404 noMatchingShare), the set no longer signing (409 conflict) or the wallet ejected (409).
[ "$(count eject 200)" -eq 1 ] && [ "$(($(count eject 401) + $(count eject 404) + $(count eject 409)))" -eq 5 ] ||
    fail "one eject token spent 6 times at once: $(answers eject) (want 1 x 200, 5 x 401, 404 or 409)"
ejected=$(sql "SELECT COUNT(*) FROM audit_events WHERE account = '$owner' AND event = 'walletEjected'")
[ "$ejected" -eq 1 ] || fail "the audit trail holds $ejected walletEjected (want 1)"

fives=$(awk '$2 ~ /^5/ || $2 == "000"' "$work/races" | wc -l)
[ "$fives" -eq 0 ] || fail "$fives race answers were 5xx or none: $(awk '$2 ~ /^5/ || $2 == "000"' "$work/races" | sort | uniq -c | tr '\n' ';')"
log "$(wc -l < "$work/races") race requests, every limit held, one winner each, no 5xx"

log "SIGKILL of server 1 (clock -2 s), then a rolling restart of all three under load: no 5xx through HAProxy"
: > "$work/load.status"
load() {
    while [ -e "$work/load.on" ]; do
        request /dev/null "$url/users/$id/recovery-methods" -H "Authorization: Bearer $token" >> "$work/load.status"
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
errors=$(grep -c -E '^(5|000)' "$work/load.status" || true)
[ "$errors" -eq 0 ] || fail "$errors of $answered requests through HAProxy answered 5xx or not at all during the restarts:" \
    "$(sort "$work/load.status" | uniq -c | tr '\n' ';') HAProxy: $(grep -E '" ?5[0-9][0-9] | 5[0-9][0-9] ' "$work/haproxy.log" | tail -n 5)"
[ "$answered" -gt 0 ] || fail "no request went through during the restarts"
log "$answered requests during the kill and restarts, none 5xx"

timeout 120 "$binary" audit verify --database "$database" > "$work/verify.out" 2>&1 || fail "audit verify: $(cat "$work/verify.out")"
log "audit verify: $(cat "$work/verify.out")"
log "passed in $((SECONDS - begun)) s"
