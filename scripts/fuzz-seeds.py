#!/usr/bin/env python3
"""Writes libFuzzer seed corpora from Vectors/ (and the SLIP-39 reference vectors) into
fuzz-out/seeds/<target>/, in the input layout each target's main.swift describes.

Usage: scripts/fuzz-seeds.py [OUT_DIR]   (default fuzz-out/seeds)
Seeds are derived, not committed: rerun after the vectors change.
"""
import base64
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz-out", "seeds")


def load(name):
    with open(os.path.join(ROOT, "Vectors", name), encoding="utf-8") as f:
        return json.load(f)["cases"]


def write(target, data):
    directory = os.path.join(OUT, target)
    os.makedirs(directory, exist_ok=True)
    # Content-addressed names, as libFuzzer does, so reruns do not duplicate seeds.
    with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def cipher_text():
    for case in load("ciphertext.json"):
        if "keyMaterial" in case:
            secret = bytes.fromhex(case["keyMaterial"])
        else:
            secret = case.get("secret", "").encode()
        secret = (secret + bytes(32))[:32]  # the target reads exactly 32 secret bytes
        text = case["cipherText"].encode()
        write("cipher-text", b"\x01" + secret + text)
        try:
            write("cipher-text", b"\x00" + secret + base64.b64decode(text, validate=True))
        except ValueError:
            pass  # deliberately bad base64: the text seed covers it


def share_record():
    for case in load("share-record.json"):
        if "recordHex" in case:
            try:
                write("share-record", b"\x00" + bytes.fromhex(case["recordHex"]))
            except ValueError:
                pass
        if "json" in case:
            value = case["json"]
            write("share-record", b"\x01" + (value.encode() if isinstance(value, str) else compact(value)))


def custodian_share():
    cases = load("selection.json")
    # The first byte is the case number: Tests/Fuzz/CustodianShare loads the same cases in file order.
    for number, case in enumerate(cases):
        write("custodian-share", bytes([number % 256]) + "\n".join(case["candidates"]).encode())
    for number, case in enumerate(load("custodian-share.json")):
        write("custodian-share", bytes([number % 256]) + case["custodianShare"].encode())


def slip39():
    path = os.path.join(ROOT, "Tests", "RecoveryKitTests", "Vectors", "slip39", "vectors.json")
    with open(path, encoding="utf-8") as f:
        for _description, mnemonics, _secret, _xprv in json.load(f):
            write("slip39", "\n".join(mnemonics).encode())


def server_requests():
    webhook = "X-Webhook-Secret: fuzz-webhook-secret"
    json_type = "Content-Type: application/json"
    cipher = next(c["cipherText"] for c in load("ciphertext.json") if c["result"] == "valid")
    custodian = next(c["custodianShare"] for c in load("custodian-share.json") if c["result"] == "valid")
    share = next(c["json"] for c in load("share-record.json") if c["result"] == "valid" and "json" in c)
    public_share = {k: v for k, v in share.items() if k != "secret"}
    requests = [
        ("GET /health", [], None),
        ("GET /custodian/key", [], None),
        ("PUT /users/fuzz-user/user-backup-share?backupMethod=PASSWORD", ["Authorization: Bearer @addOrUpdateRecovery", json_type], {"cipherText": cipher}),
        ("PUT /users/fuzz%2Duser/user-backup-share?backupMethod=CUSTOM", ["Authorization: Bearer @addOrUpdateRecovery", json_type], {"cipherText": cipher}),
        ("GET /users/fuzz-user/user-backup-share?backupMethod=PASSWORD", ["Authorization: Bearer @recover"], None),
        ("DELETE /users/fuzz-user/user-backup-share?backupMethod=PASSWORD", ["Authorization: Bearer @deleteRecovery"], {}),
        ("GET /users/fuzz-user/recovery-methods", ["Authorization: Bearer @recover"], None),
        ("POST /webhook/backup", [webhook, json_type], {"clientId": "fuzz-user", "backupShare": custodian}),
        ("POST /webhook/backup/fetch", [webhook, json_type], {"clientId": "fuzz-user"}),
        ("POST /webhook/backup/delete", [webhook, json_type], {"clientId": "fuzz-user", "backupMethod": "PASSWORD"}),
        ("POST /recovery/flows", [json_type], {"identifier": "someone@example.com", "purpose": "recover"}),
        ("POST /recovery/flows/0123456789abcdef0123456789abcdef/verify", [json_type], {"code": "123456"}),
        ("POST /custodian/wallets", [webhook, json_type], {"clientId": "fuzz-user", "sealedShare": "AAAA"}),
        ("POST /recovery/sessions", ["Authorization: Bearer @recover", json_type],
         {"clientId": "fuzz-user", "purpose": "recovery", "backupMethod": "PASSWORD", "clientShare": public_share,
          "clientKey": "00" * 32}),
        ("POST /recovery/sessions/0123456789abcdef0123456789abcdef/finish", ["Authorization: Bearer @recover", json_type], {"clientDealing": {}}),
        ("POST /recovery/sessions/0123456789abcdef0123456789abcdef/confirm", ["Authorization: Bearer @recover"], None),
        ("DELETE /recovery/sessions/0123456789abcdef0123456789abcdef", ["Authorization: Bearer @recover"], None),
    ]
    for line, headers, body in requests:
        text = "\n".join([line] + headers) + "\n\n"
        write("server-requests", text.encode() + (compact(body) if body is not None else b""))


def protocol_messages():
    """Mode byte: bit 0 the curve (ed25519 set), bits 1-3 the input kind (see its main.swift)."""
    def mode(curve, kind):
        return bytes([(1 if curve == "ed25519" else 0) | (kind << 1)])

    for case in load("dkg.json"):
        for message in case.get("messages", {}).values():
            broadcast = {"commitments": message["commitments"], "proof": message["proof"]}
            write("protocol-messages", mode(case["curve"], 0) + compact(broadcast))
    for case in load("signing.json"):
        for commitment in case.get("commitments", {}).values():
            write("protocol-messages", mode(case["curve"], 1) + compact(commitment))
        for share in case.get("signatureShares", {}).values():
            write("protocol-messages", mode(case["curve"], 2) + compact(share))
    # Mode 3 (a serialised DKG state) has no seed in the vectors: the fuzzer starts from "SRDK".
    for curve in ("secp256k1", "ed25519"):
        write("protocol-messages", mode(curve, 3) + b"SRDK\x01")
    # Modes 4 and 5, the resharing custodian's states (ResharingCustodian+Serialization.swift), built
    # from the valid cases of Vectors/resharing.json: their plans, with valid points and scalars of
    # the case where the states hold commitments and sub-shares, and the §4 records of
    # Vectors/share-record.json.
    def state_header(round_, case, expected):
        purpose = 1 if case["newKind"] == "backup" else 2
        flag = b"\x01" + bytes.fromhex(expected) if purpose == 2 else b"\x00"
        return b"SRRS\x01" + bytes([round_, purpose, 1]) + flag

    for case in load("resharing.json"):
        if case["result"] != "valid":
            continue
        client = next(s for s in case["oldShares"] if s["partyIndex"] == case["dealers"][0])
        public = {k: v for k, v in client.items() if k != "secret"}
        plan = compact({
            "oldSet": public, "dealers": case["dealers"], "newThreshold": case["newThreshold"],
            "newParties": case["newParties"], "newKind": case["newKind"], "newGeneration": case["newGeneration"],
            "newSetId": case["newSetId"],
        })
        own = [k for k in range(1, case["newParties"] + 1) if k != client["partyIndex"]]
        body = len(plan).to_bytes(2, "big") + plan + bytes([len(case["dealers"]) - 1])
        for dealer in case["dealers"][1:]:
            body += bytes([dealer]) + b"".join(bytes.fromhex(c) for c in case["newShares"][0]["commitments"])
            body += b"".join(bytes.fromhex(case["newShares"][0]["secret"]) for _ in own)
        write("protocol-messages", mode(case["curve"], 4) + state_header(1, case, client["setId"]) + body)
    records = [bytes.fromhex(c["recordHex"]) for c in load("share-record.json") if c["result"] == "valid" and "recordHex" in c]
    recovery = next(c for c in load("resharing.json") if c["result"] == "valid" and c["newKind"] == "signing")
    backup = next(c for c in load("resharing.json") if c["result"] == "valid" and c["newKind"] == "backup")
    write("protocol-messages", mode("secp256k1", 5) + state_header(2, backup, "") + b"\x00")
    for record in records[:4]:
        pending = state_header(2, recovery, recovery["oldShares"][0]["setId"]) + b"\x01" + len(record).to_bytes(2, "big") + record
        write("protocol-messages", mode("secp256k1", 5) + pending)


# secp256k1, for the ECDSA seeds: the compressed encodings of k·G for small k (affine addition).
P = 2**256 - 2**32 - 977
N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
G = (0x79BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798,
     0x483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8)


def points(count):
    """k·G for k = 1…count, each as 33 compressed bytes."""
    out, (x, y) = [], G
    for _ in range(count):
        out.append(bytes([2 + (y & 1)]) + x.to_bytes(32, "big"))
        if (x, y) == G:
            slope = 3 * x * x * pow(2 * y, -1, P) % P
        else:
            slope = (y - G[1]) * pow(x - G[0], -1, P) % P
        nx = (slope * slope - x - G[0]) % P
        x, y = nx, (slope * (G[0] - nx) - G[1]) % P
    return out


def filler(label, count):
    """`count` deterministic bytes; read as 32-byte scalars they are below n (odds 2^-128 otherwise)."""
    out = b""
    while len(out) < count:
        out += hashlib.sha256(label.encode() + len(out).to_bytes(4, "big")).digest()
    return out[:count]


def scalar(label):
    return (int.from_bytes(filler(label, 32), "big") % (N - 1) + 1).to_bytes(32, "big")


def der_integer(value):
    body = value.to_bytes(32, "big").lstrip(b"\x00") or b"\x00"
    if body[0] & 0x80:
        body = b"\x00" + body
    return b"\x02" + bytes([len(body)]) + body


def ecdsa():
    """Seeds in the layouts of docs/ecdsa.md (the targets check layouts, not protocol meaning), from
    points k·G and hashed filler: pair setup rounds, signing rounds, the pair setup's byte form,
    round states of each phase and signature encodings."""
    ps = points(256)
    write("ecdsa-setup-round1", ps[0] + ps[1] + scalar("z") + filler("c", 32))
    write("ecdsa-setup-round2", b"".join(ps))
    write("ecdsa-signing-round1", filler("round1", 32 + 32 + 256 * 84 + 48))
    reply = b"".join(scalar(f"tau{j}") for j in range(416 * 4)) + scalar("eta0") + scalar("eta1") + filler("mu", 32)
    write("ecdsa-signing-round2", ps[2] + filler("salt", 32) + ps[3] + scalar("psi") + ps[4] + ps[5] + reply)
    write("ecdsa-signing-round3", scalar("u") + scalar("w"))
    binding = lambda index: bytes([index]) + filler("set", 16) + (0).to_bytes(4, "big")
    write("ecdsa-pair-setup", b"\x01" + binding(1) + binding(2) + filler("keys", 64 + 3 * 256 * 32))
    # Round state, party 1 of 2 (Tests/Fuzz/ECDSARoundState replaces bytes 2..<34 with its session's).
    head = filler("nonce", 32) + scalar("k") + scalar("phi") + filler("salt", 32)
    peer = scalar("chi") + filler("choices", 84) + filler("rows", 672 * 32) + scalar("m0") + scalar("m1")
    phase2 = filler("sid", 32) + scalar("sk") + filler("opening", 64) + scalar("c1") + scalar("c2")
    tail = {1: b"", 2: phase2, 3: ps[6] + scalar("r")}
    for phase, extra in tail.items():
        write("ecdsa-round-state", bytes([1, phase]) + bytes(32) + head + peer + extra)
    # Signatures: selector byte (0 DER, 1 compact, 2 r‖s‖v), recovery id byte, then the encoding;
    # a low and a high s.
    for s in (int.from_bytes(scalar("s"), "big") % (N // 2), N - 5):
        r = int.from_bytes(scalar("r"), "big")
        sequence = der_integer(r) + der_integer(s)
        write("ecdsa-signature", b"\x00\x00" + b"\x30" + bytes([len(sequence)]) + sequence)
        write("ecdsa-signature", b"\x01\x01" + r.to_bytes(32, "big") + s.to_bytes(32, "big"))
        write("ecdsa-signature", b"\x02\x00" + r.to_bytes(32, "big") + s.to_bytes(32, "big") + b"\x01")


cipher_text()
share_record()
custodian_share()
slip39()
server_requests()
protocol_messages()
ecdsa()
for target in sorted(os.listdir(OUT)):
    print(f"{target}: {len(os.listdir(os.path.join(OUT, target)))} seeds")
