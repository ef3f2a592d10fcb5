#!/usr/bin/env bash
# Builds the DocC documentation of every library target with swift-docc-plugin, any DocC warning
# an error (a broken symbol link, an undocumented parameter). `make check` (CI) runs it.
# The archives land in .build/plugins/Swift-DocC/outputs/<Target>.doccarchive; preview one with
#   swift package --disable-sandbox preview-documentation --target ShareRecovery
set -euo pipefail
cd "$(dirname "$0")/.."
for target in ShareCrypto ShareRecovery RecoveryKit ShareRecoveryHTTP ShareRecoveryServer; do
    echo "docs.sh: $target" >&2
    swift package generate-documentation --target "$target" --warnings-as-errors
done
echo "docs.sh: all five catalogs built with no warning" >&2
