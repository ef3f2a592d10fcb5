#!/usr/bin/env python3
"""Checks share-recovery's threshold ECDSA signatures (docs/ecdsa.md) with libraries that know nothing
of it, each over (publicKey, digest, r, s, recoveryId, der):
  - coincurve's bundled libsecp256k1 (secp256k1_ecdsa_verify, which refuses a high s; s <= n/2 is also
    checked here, as are 0 < r < n, the recovery id 0/1 and signature = r || s);
  - python-cryptography's OpenSSL on the DER form, as a prehashed SHA-256-sized digest on SECP256K1;
    the DER bytes must also be exactly the strict DER that cryptography writes for (r, s);
  - eth-keys' pure-Python backend (not coincurve: a third implementation), which recovers the public
    key from (digest, r, s, v = recoveryId); its Ethereum address must be the signing key's, computed
    here with pycryptodome's Keccak-256 and EIP-55, and the other v must give another key.
Each signature must also fail for another digest. Keys of a path are re-derived from the wallet key
alone by independent-verify.py's BIP-32 CKDpub, and digests from the message and the hash named.

Usage: independent-verify-ecdsa.py [--vectors ECDSA_JSON] [SIGNATURES_JSONL]
  ECDSA_JSON: every valid case of an ecdsa@1 vector file (signature {r, s, recoveryId}, digest,
  shares, optional path; the DER form is written here).
  SIGNATURES_JSONL: one object per line, what `share-recovery sign --mode ecdsa` prints plus message
  (hex), hash (keccak256, sha256d or none) and, under "derive", what `derive [--path P] --address eth`
  printed for the same wallet and path. Exits 1 if any check fails.
"""
import hashlib
import importlib.util
import json
import os
import sys

import coincurve
from Crypto.Hash import keccak
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed, decode_dss_signature, encode_dss_signature
from eth_keys.backends import NativeECCBackend
from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature
from eth_utils import to_checksum_address

# BIP-32 derivation from the wallet key, shared with the BIP-340 checks (no __pycache__ left in scripts/).
sys.dont_write_bytecode = True
_spec = importlib.util.spec_from_file_location(
    "independent_verify", os.path.join(os.path.dirname(os.path.abspath(__file__)), "independent-verify.py"))
independent_verify = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(independent_verify)

N = independent_verify.N
NATIVE = NativeECCBackend()


def keccak256(data):
    return keccak.new(digest_bits=256, data=data).digest()


def ethereum_address(key):
    """docs/formats.md §12: the last 20 bytes of Keccak-256(X || Y), EIP-55 checksummed."""
    return to_checksum_address(keccak256(key.format(False)[1:])[-20:])


def digest_of(message, hash_name):
    if hash_name == "keccak256":
        return keccak256(message)
    if hash_name == "sha256d":
        return hashlib.sha256(hashlib.sha256(message).digest()).digest()
    if hash_name == "none":
        return message
    raise ValueError(f"no hash {hash_name}")


def check_signature(key, digest, r, s, recovery_id, der):
    """Every independent check of one signature under `key` (a coincurve.PublicKey); returns problems."""
    problems = []
    if not 0 < r < N:
        problems.append("r is not in [1, n-1]")
    if not 0 < s <= N // 2:
        problems.append("s is not in [1, n/2] (high s)")
    if recovery_id not in (0, 1):
        problems.append(f"recovery id {recovery_id} is not 0 or 1")
    if problems:
        return problems
    if encode_dss_signature(r, s) != der:
        # The values are still checked below, in their strict DER form.
        problems.append("der is not the strict DER of (r, s)")
        der = encode_dss_signature(r, s)
    elif decode_dss_signature(der) != (r, s):
        problems.append("cryptography decodes der to other values")
    other = hashlib.sha256(digest).digest()
    # coincurve: hasher=None verifies the 32 bytes as given.
    if not key.verify(der, digest, hasher=None):
        problems.append("libsecp256k1 (coincurve) refuses the signature")
    if key.verify(der, other, hasher=None):
        problems.append("libsecp256k1 (coincurve) accepts another digest")
    # Its refusal of high s is what makes it check low-s: (r, n - s) is the same signature, high.
    if key.verify(encode_dss_signature(r, N - s), digest, hasher=None):
        problems.append("libsecp256k1 (coincurve) accepts the high-s twin (r, n - s)")
    openssl_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256K1(), key.format(True))
    prehashed = ec.ECDSA(Prehashed(hashes.SHA256()))
    for message, expected in ((digest, True), (other, False)):
        try:
            openssl_key.verify(der, message, prehashed)
            accepted = True
        except InvalidSignature:
            accepted = False
        if accepted != expected:
            problems.append(f"OpenSSL (cryptography) {'refuses the signature' if expected else 'accepts another digest'}")
    address = ethereum_address(key)
    recovered = recovered_address(digest, recovery_id, r, s)
    if recovered != address:
        problems.append(f"eth-keys recovers {recovered or 'no key'} with v={recovery_id}, the key's address is {address}")
    elif recovered_address(digest, 1 - recovery_id, r, s) == address:
        problems.append(f"eth-keys recovers the key's address with v={1 - recovery_id} too")
    return problems


def recovered_address(digest, v, r, s):
    """ecrecover by eth-keys' pure-Python backend; None when no key recovers."""
    try:
        return Signature(vrs=(v, r, s), backend=NATIVE).recover_public_key_from_msg_hash(digest).to_checksum_address()
    except BadSignature:
        return None


def check_record(item):
    """One `sign --mode ecdsa` output: the key re-derived, the digest recomputed, then check_signature."""
    problems = []
    shown = item["derive"]
    wallet = bytes.fromhex(shown["walletPublicKey"])
    path = item.get("path")
    key = independent_verify.derive(wallet, path)[0] if path else coincurve.PublicKey(wallet)
    for name, value in (("sign's publicKey", item["publicKey"]), ("derive's publicKey", shown["publicKey"])):
        if value != key.format(True).hex():
            problems.append(f"{name} is {value}, recomputed {key.format(True).hex()}")
    if shown["address"] != ethereum_address(key):
        problems.append(f"derive's address is {shown['address']}, recomputed {ethereum_address(key)}")
    digest = bytes.fromhex(item["digest"])
    if digest != digest_of(bytes.fromhex(item["message"]), item["hash"]):
        problems.append(f"digest is not {item['hash']} of the message")
    r, s = int(item["r"], 16), int(item["s"], 16)
    if item["mode"] != "ecdsa" or len(item["r"]) != 64 or len(item["s"]) != 64 or item["signature"] != item["r"] + item["s"]:
        problems.append("mode is not ecdsa, or signature is not the 32-byte r || 32-byte s")
    return problems + check_signature(key, digest, r, s, item["recoveryId"], bytes.fromhex(item["der"]))


def vector_checks(path):
    with open(path, encoding="utf-8") as f:
        for case in json.load(f)["cases"]:
            if case["result"] != "valid":
                continue
            wallet = bytes.fromhex(case["shares"][0]["publicKey"])
            path = case.get("path")
            if isinstance(path, list):  # indices rather than the m/a/b text
                path = "/".join(["m"] + [str(index) for index in path])
            key = independent_verify.derive(wallet, path)[0] if path else coincurve.PublicKey(wallet)
            signature = case["signature"]
            r, s = int(signature["r"], 16), int(signature["s"], 16)
            yield case["id"], lambda key=key, case=case, r=r, s=s, v=signature["recoveryId"]: check_signature(
                key, bytes.fromhex(case["digest"]), r, s, v, encode_dss_signature(r, s))


def record_checks(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            item = json.loads(line)
            name = f"line {number} ({item['hash']}{', ' + item['path'] if item.get('path') else ''})"
            yield name, lambda item=item: check_record(item)


def main():
    arguments = sys.argv[1:]
    checks = []
    if arguments[:1] == ["--vectors"] and len(arguments) >= 2:
        checks += [("vector", name, check) for name, check in vector_checks(arguments[1])]
        arguments = arguments[2:]
    if len(arguments) > 1 or (arguments and arguments[0].startswith("-")):
        print(__doc__, file=sys.stderr)
        return 2
    if arguments:
        checks += [("signature", name, check) for name, check in record_checks(arguments[0])]
    if not checks:
        print("independent-verify-ecdsa: nothing to check", file=sys.stderr)
        return 1
    failed = 0
    for source, name, check in checks:
        problems = check()
        failed += bool(problems)
        for problem in problems:
            print(f"FAILED ECDSA {source} {name}: {problem}", file=sys.stderr)
    for source in ("vector", "signature"):
        count = sum(1 for checked, _, _ in checks if checked == source)
        if count:
            print(f"independent-verify: secp256k1 ecdsa: {count} {source}s checked")
    print(f"independent-verify: {len(checks) - failed} of {len(checks)} ECDSA signatures verified by libsecp256k1, "
          "OpenSSL and eth-keys' address recovery")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
