#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on 127.0.0.1 for the server tests and prints the variables to use:
#
#   eval "$(.ci/postgres.sh)"            # start; exports SHARE_RECOVERY_TEST_POSTGRES_URL, ..._DIR and ..._CA
#   swift test --filter ShareRecoveryServerTests
#   .ci/postgres.sh stop "$SHARE_RECOVERY_TEST_POSTGRES_DIR"
#
# The tests' cluster skips durability (fsync, synchronous_commit and full_page_writes off): the tests
# check answers, not power cuts. `.ci/postgres.sh --durable` keeps PostgreSQL's durable defaults, for
# benchmarks that are compared with SQLite's (which commits with an fsync, synchronous = FULL).
#
# Installs postgresql with apt-get when it is missing. When run as root, the cluster belongs to the
# `postgres` user (initdb refuses root). Only the export lines go to stdout; progress goes to stderr.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

find_bin() {
    local dir
    for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
    done
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v initdb)"; return 0
    fi
    return 1
}

if [ "${1:-}" = "stop" ]; then
    dir="${2:?usage: postgres.sh stop <dir>}"
    bin="$(find_bin)"
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >&2 || true
    rm -rf "$dir"
    log "stopped and removed $dir"
    exit 0
fi

durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
case "${1:-}" in
    "") ;;
    --durable) durability="" ;;
    -h | --help)
        # The comment block at the top of this file, without its "# ".
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
        ;;
    *)
        log "unknown argument '$1': use no argument, --durable, or stop <dir>"
        exit 2
        ;;
esac

if ! bin="$(find_bin)"; then
    log "installing postgresql"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y postgresql >&2
    bin="$(find_bin)"
fi

. "$(dirname "$0")/../scripts/free-port.sh"

dir="$(mktemp -d /tmp/share-recovery-pg.XXXXXX)"
chmod 700 "$dir"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
password="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$password" > "$dir/pwfile"
if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/pwfile"; fi
chmod 600 "$dir/pwfile"

log "initdb in $dir/data"
as_owner "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" --auth=scram-sha-256 --no-sync -E UTF8 >/dev/null
rm -f "$dir/pwfile"

# TLS for the tests of `--database-tls` (DatabaseDeploymentTests): a throwaway CA signs a certificate for
# localhost (not for 127.0.0.1, so that verify-full can be seen refusing a name the certificate lacks). The
# tests' URL keeps sslmode=disable; without openssl the cluster has no TLS and those tests are skipped.
tls=""
if command -v openssl >/dev/null 2>&1; then
    key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
    key "$dir/ca.key" && key "$dir/data/server.key" &&
        openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=share-recovery test CA" -days 2 -out "$dir/ca.pem" 2>/dev/null &&
        openssl req -new -key "$dir/data/server.key" -subj "/CN=localhost" 2>/dev/null |
        openssl x509 -req -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 2 \
            -extfile <(printf 'subjectAltName=DNS:localhost\n') -out "$dir/data/server.crt" 2>/dev/null &&
        tls="-c ssl=on"
    rm -f "$dir/ca.key" "$dir/ca.srl"
    if [ -n "$tls" ]; then
        chmod 600 "$dir/data/server.key"
        if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/data/server.key" "$dir/data/server.crt"; fi
        chmod 644 "$dir/ca.pem"
    else
        log "openssl failed: the cluster runs without TLS"
    fi
fi

port="$(free_port)"
log "starting on 127.0.0.1:$port"
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=300 $durability $tls" >&2

PGPASSWORD="$password" "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
    -c "CREATE DATABASE share_recovery_test" >&2

url="postgres://postgres:$password@127.0.0.1:$port/share_recovery_test?sslmode=disable"
log "ready: ${url/:$password@/:***@}"
echo "export SHARE_RECOVERY_TEST_POSTGRES_URL='$url'"
echo "export SHARE_RECOVERY_TEST_POSTGRES_DIR='$dir'"
if [ -n "$tls" ]; then echo "export SHARE_RECOVERY_TEST_POSTGRES_CA='$dir/ca.pem'"; fi
