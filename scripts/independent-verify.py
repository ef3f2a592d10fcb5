#!/usr/bin/env python3
"""Checks share-recovery's signatures with verifiers that know nothing of it (FORMATS.md §11):
PyNaCl's bundled libsodium for ed25519 (RFC 8032), coincurve's bundled libsecp256k1 for BIP-340,
and RFC 9591 section 5.4 verify_signature for FROST(secp256k1, SHA-256) written here from the RFC
over coincurve's point arithmetic.

Usage: independent-verify.py VECTORS_DIR [SIGNATURES_JSONL]
  every valid case of VECTORS_DIR/signing.json, then every line of SIGNATURES_JSONL (objects with
  curve, mode, publicKey, message (hex) and signature, as `share-recovery sign` prints plus the
  message). Exits 1 if any signature fails.
"""
import hashlib
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


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    checks = []
    with open(f"{sys.argv[1]}/signing.json", encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["result"] != "valid":
                continue
            key = bytes.fromhex(case["shares"][0]["publicKey"])
            checks.append((case["id"], case["curve"], case["mode"], key, bytes.fromhex(case["message"]), bytes.fromhex(case["signature"])))
    if len(sys.argv) == 3:
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
