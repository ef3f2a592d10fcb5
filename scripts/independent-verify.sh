#!/usr/bin/env bash
# Signatures checked by verifiers that know nothing of share-recovery (docs/formats.md §11): a venv with
# PyNaCl (libsodium) and coincurve (libsecp256k1), both with their own bundled C libraries, checks
# every valid case of Vectors/signing.json and fresh signatures the CLI makes from DKG-made wallets
# in every mode (scripts/independent-verify.py says how each mode is checked), then signatures under
# derived and Taproot keys, whose keys are re-derived in Python from the wallet key and the path, then
# keys that `eject` rebuilt, whose public keys coincurve and PyNaCl compute again.
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
# Child keys and Taproot (docs/derivation.md): derive and sign --path/--taproot on DKG-made 2-of-3
# wallets, each signer pair in turn; the Python side re-derives every key from the wallet key alone.
for round in 1 2 3; do
    dir="$work/derived-$round"
    "$bin" keygen --dkg --curve secp256k1 --wallet-id "d-$round" --threshold 2 --parties 3 --out "$dir" >/dev/null
    signers=(1 2 1 3 2 3)
    first=${signers[$(((round - 1) * 2))]} second=${signers[$(((round - 1) * 2 + 1))]}
    for spec in "m/0 no" "m/0/1 yes" "m yes" "m/7/2147483647/3 no" "m/86/0/0/$round yes"; do
        read -r path taproot <<<"$spec"
        flags=(--path "$path")
        if [ "$taproot" = yes ]; then flags+=(--taproot); fi
        head -c 32 /dev/urandom >"$dir/sighash.bin"
        "$bin" derive "${flags[@]}" --signing-share "$dir/share-1.json" >"$dir/derive.json"
        "$bin" sign --signing-share "$dir/share-$first.json" --signing-share "$dir/share-$second.json" \
            --message-file "$dir/sighash.bin" "${flags[@]}" >"$dir/sig.json"
        "$venv/bin/python" - "$dir" >>"$work/derived.jsonl" <<'PY'
import json, sys
d = sys.argv[1]
out = json.load(open(f"{d}/sig.json"))
out["message"] = open(f"{d}/sighash.bin", "rb").read().hex()
out["derive"] = json.load(open(f"{d}/derive.json"))
print(json.dumps(out))
PY
    done
done
"$venv/bin/python" scripts/independent-verify.py Vectors "$work/signatures.jsonl" "$work/derived.jsonl"
# Eject (docs/eject.md): keys rebuilt offline from DKG-made wallets, checked by coincurve and PyNaCl.
for curve in secp256k1 ed25519; do
    for layout in "2 2" "2 3" "3 5"; do
        read -r t n <<<"$layout"
        dir="$work/eject-$curve-$t-$n"
        "$bin" keygen --dkg --curve "$curve" --wallet-id "e-$t-$n" --threshold "$t" --parties "$n" --out "$dir" >/dev/null
        shares=()
        for i in $(seq $((n - t + 1)) "$n"); do shares+=(--signing-share "$dir/share-$i.json"); done
        # A WIF's network is a secp256k1 key's only: eject refuses --network on ed25519.
        network=()
        if [ "$curve" = secp256k1 ]; then
            network=(--network mainnet)
            if [ "$n" = 3 ]; then network=(--network testnet); fi
        fi
        "$bin" eject "${shares[@]}" "${network[@]}" --reveal-secret 2>/dev/null >>"$work/ejected.jsonl"
    done
done
"$venv/bin/python" scripts/independent-verify-eject.py "$work/ejected.jsonl"
