# Sourced by scripts that start a listener whose port they must know beforehand (.ci/postgres.sh,
# scripts/fleet-test.sh): `free_port` prints a loopback port in 20000–49999 that nothing accepts on.
free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$(((RANDOM % 30000) + 20000))
        if ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then echo "$port"; return 0; fi
    done
    return 1
}
