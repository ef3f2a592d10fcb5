#!/usr/bin/env bash
# Builds the DocC documentation of every library target with swift-docc-plugin, any DocC warning
# an error (a broken symbol link, an undocumented parameter). `make check` (CI) runs it.
# One invocation for all five targets: the plugin then builds its snippet tool and the package once,
# where one invocation per target repeated both (about a quarter slower, warm).
# The archives land in .build/plugins/Swift-DocC/outputs/<Target>.doccarchive; preview one with
#   swift package --disable-sandbox preview-documentation --target ShareRecovery
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(ShareCrypto ShareRecovery RecoveryKit ShareRecoveryHTTP ShareRecoveryServer)
selection=()
for target in "${targets[@]}"; do
    selection+=(--target "$target")
    # An archive left by an earlier run must not pass for this run's.
    rm -rf ".build/plugins/Swift-DocC/outputs/$target.doccarchive"
done
swift package generate-documentation "${selection[@]}" --warnings-as-errors
for target in "${targets[@]}"; do
    if [ ! -d ".build/plugins/Swift-DocC/outputs/$target.doccarchive" ]; then
        echo "docs.sh: no archive for $target" >&2
        exit 1
    fi
done
echo "docs.sh: all ${#targets[@]} catalogs built with no warning: ${targets[*]}" >&2
