#!/usr/bin/env bash
# Signatures checked by verifiers that know nothing of share-recovery (FORMATS.md §11): a venv with
# PyNaCl (libsodium) and coincurve (libsecp256k1), both with their own bundled C libraries, checks
# every valid case of Vectors/signing.json and fresh signatures the CLI makes from DKG-made wallets
# in every mode (scripts/independent-verify.py says how each mode is checked).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build-venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check pynacl==1.6.2 coincurve==21.0.0
swift build --product share-recovery >&2
bin=$(swift build --show-bin-path)/share-recovery
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for combination in "secp256k1 bip340" "secp256k1 rfc9591" "ed25519 rfc9591"; do
    set -- $combination
    for layout in "2 2" "2 3" "3 5"; do
        read -r t n <<<"$layout"
        for round in 1 2 3; do
            dir="$work/$1-$2-$t-$n-$round"
            "$bin" keygen --dkg --curve "$1" --wallet-id "w-$round" --threshold "$t" --parties "$n" --out "$dir" >/dev/null
            head -c $((round * 37)) /dev/urandom >"$dir/msg.bin"
            shares=()
            for i in $(seq $((n - t + 1)) "$n"); do shares+=(--signing-share "$dir/share-$i.json"); done
            "$bin" sign "${shares[@]}" --message-file "$dir/msg.bin" --mode "$2" >"$dir/sig.json"
            "$venv/bin/python" - "$dir" >>"$work/signatures.jsonl" <<'PY'
import json, sys
d = sys.argv[1]
out = json.load(open(f"{d}/sig.json"))
out["message"] = open(f"{d}/msg.bin", "rb").read().hex()
print(json.dumps(out))
PY
        done
    done
done
"$venv/bin/python" scripts/independent-verify.py Vectors "$work/signatures.jsonl"
