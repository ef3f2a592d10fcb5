#!/usr/bin/env python3
"""Checks keys that `share-recovery eject` rebuilt (docs/eject.md) with libraries that know nothing of
share-recovery: coincurve's bundled libsecp256k1 derives the secp256k1 public key from privateKeyHex,
the WIF is decoded here (Base58 and the double-SHA-256 checksum with hashlib) and must hold the same key
with the version byte of its network and the compression flag, and the xprv must be BIP-32's depth-0
serialization of that key with BIP-328's chain code (computed here as SHA-256("MuSig2MuSig2MuSig2")); PyNaCl's bundled libsodium multiplies the
ed25519 scalar by the base point without clamping. Each public key must be the wallet's.

Usage: independent-verify-eject.py EJECTED_JSONL  (one key file per line, as `eject --reveal-secret` prints)
Exits 1 if any check fails.
"""
import hashlib
import json
import sys

import coincurve
import nacl.bindings

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
VERSIONS = {"mainnet": 0x80, "testnet": 0xEF}
EXTENDED_VERSIONS = {"mainnet": bytes.fromhex("0488ade4"), "testnet": bytes.fromhex("04358394")}
# BIP-328's chain code for the root of an aggregate key, as that BIP defines it.
CHAIN_CODE = hashlib.sha256(b"MuSig2MuSig2MuSig2").digest()


def base58check_decode(text):
    number = 0
    for character in text:
        number = number * 58 + ALPHABET.index(character)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\x00" * (len(text) - len(text.lstrip("1"))) + body
    payload, checksum = raw[:-4], raw[-4:]
    if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != checksum:
        raise ValueError("checksum mismatch")
    return payload


def check(item):
    problems = []
    key = bytes.fromhex(item["privateKeyHex"])
    if item["curve"] == "secp256k1":
        public = coincurve.PrivateKey(key).public_key.format(compressed=True).hex()
        if public != item["publicKey"]:
            problems.append(f"coincurve derives {public}, the wallet is {item['publicKey']}")
        payload = base58check_decode(item["wif"])
        if len(payload) != 34 or payload[0] != VERSIONS[item["wifNetwork"]] or payload[33] != 1 or payload[1:33] != key:
            problems.append("the WIF does not hold version, key and the compression flag")
        extended = base58check_decode(item["xprv"])
        expected = EXTENDED_VERSIONS[item["wifNetwork"]] + bytes(9) + CHAIN_CODE + b"\x00" + key
        if extended != expected:
            problems.append("the xprv is not BIP-32's root serialization of the key with BIP-328's chain code")
    else:
        public = nacl.bindings.crypto_scalarmult_ed25519_base_noclamp(key).hex()
        if public != item["publicKey"]:
            problems.append(f"libsodium derives {public}, the wallet is {item['publicKey']}")
        if "wif" in item:
            problems.append("an ed25519 key has a WIF")
    return problems


def main():
    failed = total = 0
    with open(sys.argv[1], encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            item = json.loads(line)
            total += 1
            problems = check(item)
            if problems:
                failed += 1
                for problem in problems:
                    # Never the key itself: the line number and the public facts name the case.
                    print(f"FAILED ejected line {number} ({item['curve']}, {item['walletId']}): {problem}", file=sys.stderr)
    print(f"independent-verify: {total - failed} of {total} ejected keys match their wallet's public key independently")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
