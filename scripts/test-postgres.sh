# Sourced by scripts/test.sh and scripts/check.sh: gives the PostgreSQL tests a throwaway server on
# 127.0.0.1 (.ci/postgres.sh installs and starts it) unless SHARE_RECOVERY_TEST_POSTGRES_URL already
# names one, and stops it when the calling script exits. If it cannot start, those tests say
# SKIPPED loudly and the rest still run. A caller that sets an EXIT trap of its own calls
# stop_test_postgres in it (scripts/check.sh does).
started_test_postgres=""
stop_test_postgres() {
    if [ -n "$started_test_postgres" ]; then .ci/postgres.sh stop "$started_test_postgres" || true; fi
}
if [ -z "${SHARE_RECOVERY_TEST_POSTGRES_URL:-}" ]; then
    if exports=$(.ci/postgres.sh); then
        eval "$exports"
        started_test_postgres=$SHARE_RECOVERY_TEST_POSTGRES_DIR
        trap stop_test_postgres EXIT
    else
        echo "WARNING: PostgreSQL could not be started; its tests will say SKIPPED" >&2
    fi
fi
