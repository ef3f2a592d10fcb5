#!/usr/bin/env python3
"""Checks share-recovery's signatures with verifiers that know nothing of it (docs/formats.md §11):
PyNaCl's bundled libsodium for ed25519 (RFC 8032), coincurve's bundled libsecp256k1 for BIP-340,
and RFC 9591 section 5.4 verify_signature for FROST(secp256k1, SHA-256) written here from the RFC
over coincurve's point arithmetic. Derived and Taproot keys (docs/derivation.md) are re-derived here
from the wallet key alone: BIP-32 CKDpub with hmac/hashlib and coincurve's point addition from
BIP-328's chain code, xpubs serialised here, BIP-341's output key from hash_TapTweak.

Usage: independent-verify.py VECTORS_DIR [SIGNATURES_JSONL [DERIVED_JSONL]]
  every valid case of VECTORS_DIR/signing.json, then every line of SIGNATURES_JSONL (objects with
  curve, mode, publicKey, message (hex) and signature, as `share-recovery sign` prints plus the
  message), then every line of DERIVED_JSONL (what `sign --path/--taproot` prints, plus the message
  and, under "derive", what `derive` printed for the same path). Exits 1 if any check fails.
"""
import hashlib
import hmac
import json
import sys

import coincurve
import nacl.exceptions
import nacl.signing

N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def expand_message_xmd(message, dst, length):
    """RFC 9380 section 5.3.1 with SHA-256."""
    b_in_bytes, r_in_bytes = 32, 64
    ell = -(-length // b_in_bytes)
    dst_prime = dst + bytes([len(dst)])
    b0 = hashlib.sha256(bytes(r_in_bytes) + message + length.to_bytes(2, "big") + b"\x00" + dst_prime).digest()
    blocks = [hashlib.sha256(b0 + b"\x01" + dst_prime).digest()]
    for i in range(2, ell + 1):
        previous = bytes(x ^ y for x, y in zip(b0, blocks[-1]))
        blocks.append(hashlib.sha256(previous + bytes([i]) + dst_prime).digest())
    return b"".join(blocks)[:length]


def h2_secp256k1(message):
    """RFC 9591 section 6.5 H2: hash_to_field with DST contextString || "chal", L = 48."""
    dst = b"FROST-secp256k1-SHA256-v1chal"
    return int.from_bytes(expand_message_xmd(message, dst, 48), "big") % N


def verify_rfc9591_secp256k1(public_key, message, signature):
    if len(signature) != 65:
        return False
    try:
        commitment = coincurve.PublicKey(signature[:33])
        key = coincurve.PublicKey(public_key)
    except ValueError:
        return False
    z = int.from_bytes(signature[33:], "big")
    if z >= N:
        return False
    c = h2_secp256k1(commitment.format(True) + key.format(True) + message)
    left = coincurve.PrivateKey(z.to_bytes(32, "big")).public_key if z else None
    terms = [commitment] + ([key.multiply(c.to_bytes(32, "big"))] if c else [])
    try:
        right = coincurve.PublicKey.combine_keys(terms)
    except ValueError:
        return False
    return left is not None and left.format(True) == right.format(True)


def verify(curve, mode, public_key, message, signature):
    if curve == "ed25519" and mode == "rfc9591":
        try:
            nacl.signing.VerifyKey(public_key).verify(message, signature)
            return True
        except (nacl.exceptions.BadSignatureError, ValueError):
            return False
    if curve == "secp256k1" and mode == "bip340":
        if len(signature) != 64:
            return False
        return coincurve.PublicKeyXOnly(public_key[1:]).verify(signature, message)
    if curve == "secp256k1" and mode == "rfc9591":
        return verify_rfc9591_secp256k1(public_key, message, signature)
    raise ValueError(f"no mode {mode} on {curve}")


# BIP-328: the chain code of a synthetic xpub of an aggregate key.
BIP328_CHAIN_CODE = hashlib.sha256(b"MuSig2MuSig2MuSig2").digest()
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def base58check(payload):
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    number = int.from_bytes(data, "big")
    text = ""
    while number:
        number, digit = divmod(number, 58)
        text = BASE58[digit] + text
    return "1" * (len(data) - len(data.lstrip(b"\x00"))) + text


def xpub(key, chain_code, depth, fingerprint, child_number):
    """BIP-32 serialisation, mainnet public version."""
    return base58check(bytes.fromhex("0488b21e") + bytes([depth]) + fingerprint + child_number.to_bytes(4, "big")
                       + chain_code + key.format(True))


def hash160(data):
    return hashlib.new("ripemd160", hashlib.sha256(data).digest()).digest()


def tagged_hash(tag, data):
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


def derive(wallet_key, path):
    """BIP-32 CKDpub along `m/a/b/...` from BIP-328's synthetic root; returns the child, its
    chain code, its xpub, the root xpub and the I_L of each step."""
    key, chain_code = coincurve.PublicKey(wallet_key), BIP328_CHAIN_CODE
    root = xpub(key, chain_code, 0, bytes(4), 0)
    depth, fingerprint, number, tweaks = 0, bytes(4), 0, []
    for step in path.split("/")[1:]:
        index = int(step)
        assert index < 2**31, "non-hardened only"
        i = hmac.new(chain_code, key.format(True) + index.to_bytes(4, "big"), hashlib.sha512).digest()
        if int.from_bytes(i[:32], "big") >= N:
            raise ValueError(f"invalid child {index}")
        fingerprint, depth, number = hash160(key.format(True))[:4], depth + 1, index
        key, chain_code = key.add(i[:32]), i[32:]
        tweaks.append(i[:32].hex())
    return key, chain_code, xpub(key, chain_code, depth, fingerprint, number), root, tweaks


def taproot_output_key(internal_key):
    """BIP-341 with no script tree: Q = lift_x(x(P)) + int(hash_TapTweak(x(P)))*G."""
    x = internal_key.format(True)[1:]
    tweak = tagged_hash("TapTweak", x)
    assert int.from_bytes(tweak, "big") < N
    return coincurve.PublicKey(b"\x02" + x).add(tweak), tweak


def check_derived(item):
    """Every key and string `derive` and `sign` printed, recomputed from the wallet key; the
    signature checked under the recomputed key. Returns a list of mismatches."""
    problems = []
    shown = item["derive"]
    wallet = bytes.fromhex(item["publicKey"])
    if shown["walletPublicKey"] != item["publicKey"] or shown["path"] != item["path"]:
        problems.append("derive and sign name different wallets or paths")
    child, chain_code, child_xpub, root_xpub, tweaks = derive(wallet, item["path"])
    expected = {"publicKey": child.format(True).hex(), "xOnlyPublicKey": child.format(True)[1:].hex(),
                "chainCode": chain_code.hex(), "xpub": child_xpub, "rootXpub": root_xpub, "tweaks": tweaks}
    signing_key = child
    if item["taproot"]:
        signing_key, tweak = taproot_output_key(child)
        x = signing_key.format(True)[1:]
        expected.update({"taprootTweak": tweak.hex(), "outputKey": x.hex(), "outputKeyParity": signing_key.format(True)[0] - 2,
                         "scriptPubKey": "5120" + x.hex()})
    for name, value in expected.items():
        if shown.get(name) != value:
            problems.append(f"derive's {name} is {shown.get(name)}, recomputed {value}")
    if item["signingKey"] != signing_key.format(True).hex():
        problems.append(f"sign's signingKey is {item['signingKey']}, recomputed {signing_key.format(True).hex()}")
    message, signature = bytes.fromhex(item["message"]), bytes.fromhex(item["signature"])
    x_only = coincurve.PublicKeyXOnly(signing_key.format(True)[1:])
    if not x_only.verify(signature, message):
        problems.append("the signature does not verify under the recomputed key")
    if x_only.verify(signature, message + b"\x00"):
        problems.append("the verifier accepts another message")
    if coincurve.PublicKeyXOnly(wallet[1:]).verify(signature, message):
        problems.append("the signature verifies under the untweaked wallet key")
    return problems


def main():
    if len(sys.argv) not in (2, 3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    checks = []
    with open(f"{sys.argv[1]}/signing.json", encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["result"] != "valid":
                continue
            key = bytes.fromhex(case["shares"][0]["publicKey"])
            checks.append((case["id"], case["curve"], case["mode"], key, bytes.fromhex(case["message"]), bytes.fromhex(case["signature"])))
    if len(sys.argv) >= 3:
        with open(sys.argv[2], encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                item = json.loads(line)
                checks.append((f"line {number}", item["curve"], item["mode"], bytes.fromhex(item["publicKey"]),
                               bytes.fromhex(item["message"]), bytes.fromhex(item["signature"])))
    failed = 0
    counts = {}
    for name, curve, mode, key, message, signature in checks:
        ok = verify(curve, mode, key, message, signature)
        # The same signature must fail for another message: a verifier that accepts anything proves nothing.
        tampered = verify(curve, mode, key, message + b"\x00", signature)
        if not ok or tampered:
            failed += 1
            print(f"FAILED {name} ({curve} {mode}): valid={ok}, accepts another message={tampered}", file=sys.stderr)
        counts[(curve, mode)] = counts.get((curve, mode), 0) + 1
    for (curve, mode), count in sorted(counts.items()):
        print(f"independent-verify: {curve} {mode}: {count} signatures checked")
    print(f"independent-verify: {len(checks) - failed} of {len(checks)} signatures verified independently")
    if len(sys.argv) == 4:
        derived = derived_failed = 0
        with open(sys.argv[3], encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                item = json.loads(line)
                derived += 1
                problems = check_derived(item)
                if problems:
                    derived_failed += 1
                    for problem in problems:
                        print(f"FAILED derived line {number} ({item['path']}, taproot={item['taproot']}): {problem}", file=sys.stderr)
        print(f"independent-verify: {derived - derived_failed} of {derived} derived/Taproot keys re-derived and their signatures verified")
        failed += derived_failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
