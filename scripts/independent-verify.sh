#!/usr/bin/env bash
# Signatures checked by verifiers that know nothing of share-recovery (docs/formats.md §11, §12): a venv
# with PyNaCl (libsodium), coincurve (libsecp256k1), cryptography (OpenSSL) and eth-keys, the C
# libraries bundled by each (scripts/verify-requirements.txt), checks every valid case of
# Vectors/signing.json and fresh signatures the CLI makes from DKG-made wallets in every mode
# (scripts/independent-verify.py says how each mode is checked), then signatures under derived and
# Taproot keys, whose keys are re-derived in Python from the wallet key and the path, then threshold
# ECDSA signatures and the valid cases of Vectors/ecdsa.json (scripts/independent-verify-ecdsa.py),
# then keys that `eject` rebuilt, whose public keys coincurve and PyNaCl compute again.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/verify-venv.sh
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
# Threshold ECDSA (docs/ecdsa.md): DKG-made wallets sign with `sign --mode ecdsa` (the pair setups made in
# process) under each --hash, 2 of 2, each pair of a 2-of-3 set, 3 of 5, and once for a child path;
# `derive --address eth` names each key's address. The Python side recomputes every digest, key and
# address, and checks each signature with coincurve, OpenSSL and eth-keys' public-key recovery.
ecdsa_sign() { # DIR HASH PATH SIGNER...: one signature by the named parties; PATH "" for the wallet key
    local dir=$1 hash=$2 path=$3
    shift 3
    local flags=(--hash "$hash") derive_flags=(--address eth) shares=() i
    if [ -n "$path" ]; then
        flags+=(--path "$path")
        derive_flags+=(--path "$path")
    fi
    # --hash none signs the message as the digest, so it must be 32 bytes.
    if [ "$hash" = none ]; then head -c 32 /dev/urandom >"$dir/msg.bin"; else head -c $((1 + RANDOM % 200)) /dev/urandom >"$dir/msg.bin"; fi
    for i in "$@"; do shares+=(--signing-share "$dir/share-$i.json"); done
    "$bin" derive "${derive_flags[@]}" --signing-share "$dir/share-1.json" >"$dir/derive.json"
    "$bin" sign --mode ecdsa "${shares[@]}" --message-file "$dir/msg.bin" "${flags[@]}" >"$dir/sig.json"
    "$venv/bin/python" - "$dir" "$hash" "$path" >>"$work/ecdsa.jsonl" <<'PY'
import json, sys
d, hash_name, path = sys.argv[1:]
out = json.load(open(f"{d}/sig.json"))
out.update(message=open(f"{d}/msg.bin", "rb").read().hex(), hash=hash_name, derive=json.load(open(f"{d}/derive.json")))
if path:
    out["path"] = path
print(json.dumps(out))
PY
}
for layout in "2 2" "2 3" "3 5"; do
    read -r t n <<<"$layout"
    "$bin" keygen --dkg --curve secp256k1 --wallet-id "ecdsa-$t-$n" --threshold "$t" --parties "$n" --out "$work/ecdsa-$t-$n" >/dev/null
done
for hash in keccak256 sha256d none; do ecdsa_sign "$work/ecdsa-2-2" "$hash" "" 1 2; done
ecdsa_sign "$work/ecdsa-2-3" keccak256 "" 1 2
ecdsa_sign "$work/ecdsa-2-3" sha256d "" 1 3
ecdsa_sign "$work/ecdsa-2-3" none "" 2 3
ecdsa_sign "$work/ecdsa-2-3" keccak256 m/0/1 3 1
ecdsa_sign "$work/ecdsa-3-5" sha256d "" 2 4 5
# The vectors' valid cases are checked too.
"$venv/bin/python" scripts/independent-verify-ecdsa.py --vectors Vectors/ecdsa.json "$work/ecdsa.jsonl"
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
