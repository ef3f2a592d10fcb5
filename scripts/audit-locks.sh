#!/usr/bin/env bash
# Samples what PostgreSQL's backends wait on while recovery-bench loads a reference server with
# sessions (64 connections; docs/server-design.md, "Audit locks under load"): `scripts/audit-locks.sh
# [--bench PATH] [--interval SECONDS] [--serve-processes N]` runs `recovery-bench --server-workload session` against the
# PostgreSQL named by SHARE_RECOVERY_BENCH_POSTGRES_URL (a durable one: `eval "$(.ci/postgres.sh
# --durable)"` and export its URL so), samples pg_stat_activity and pg_locks every INTERVAL seconds
# (default 0.1) while it runs, and prints the sessions per second recovery-bench reports and a table of
# the waits seen: how many samples found a backend waiting on each wait event, and, for lock waits, on
# which relation (audit_chain_heads: one account's head; audit_head would be the old single head).
# --serve-processes N (default 1) makes recovery-bench load N serve processes of the one database after
# the run with one, so it reports sessions per second for both.
# --bench defaults to .build/release/recovery-bench (build it with
# `swift build -c release --product recovery-bench`).
set -euo pipefail
cd "$(dirname "$0")/.."

bench=.build/release/recovery-bench
interval=0.1
processes=1
while [ $# -gt 0 ]; do
    case "$1" in
        --bench) bench=$2; shift 2 ;;
        --interval) interval=$2; shift 2 ;;
        --serve-processes) processes=$2; shift 2 ;;
        -h | --help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "audit-locks.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
url=${SHARE_RECOVERY_BENCH_POSTGRES_URL:?audit-locks.sh: set SHARE_RECOVERY_BENCH_POSTGRES_URL to a durable PostgreSQL}
[ -x "$bench" ] || { echo "audit-locks.sh: no recovery-bench at $bench (see --help)" >&2; exit 1; }

work=$(mktemp -d)
bench_pid=""
trap 'if [ -n "$bench_pid" ]; then kill "$bench_pid" 2>/dev/null || true; wait "$bench_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT

# One line per waiting backend per sample: wait type, wait event, and the relation a lock wait is on.
sample_sql="SELECT a.wait_event_type, a.wait_event, coalesce(string_agg(DISTINCT l.relation::regclass::text, '+'), '-')
FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.state = 'active'
  AND a.wait_event IS NOT NULL
GROUP BY a.pid, a.wait_event_type, a.wait_event"

"$bench" --server-workload session --serve-processes "$processes" --json "$work/bench.json" > "$work/bench.out" 2>&1 &
bench_pid=$!
samples=0
while kill -0 "$bench_pid" 2>/dev/null; do
    psql "$url" -XAtF ' ' -c "$sample_sql" >> "$work/waits" 2>/dev/null || true
    samples=$((samples + 1))
    sleep "$interval"
done
status=0
wait "$bench_pid" || status=$?
bench_pid=""
grep -i "session" "$work/bench.out" || true
[ "$status" -eq 0 ] || { cat "$work/bench.out" >&2; echo "audit-locks.sh: recovery-bench failed" >&2; exit 1; }
echo "samples: $samples (every ${interval} s)"
echo "count wait_type wait_event relation"
if [ -s "$work/waits" ]; then sort "$work/waits" | uniq -c | sort -rn; else echo "(no backend was seen waiting)"; fi
