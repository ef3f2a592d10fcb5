#!/usr/bin/env python3
"""Decodes what Examples' eip1559-transfer printed with eth-account, which knows nothing of
share-recovery: the raw transaction must be a type-2 (EIP-1559) transaction whose every field is the
one the program built, whose RLP eth-account writes back byte for byte, whose signing hash is the one
the program signed, with a low s (EIP-2) and a yParity of 0 or 1, and whose sender, recovered by
`Account.recover_transaction`, is the wallet's printed address, itself the address eth-keys computes
from the printed public key.

Usage: check-eip1559-transfer.py OUTPUT_JSON  (the program's stdout). Exits 1 if any check fails.
"""
import json
import sys

from eth_account import Account
from eth_account.typed_transactions import TypedTransaction
from eth_keys import keys
from eth_utils import to_checksum_address
from hexbytes import HexBytes

N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        printed = json.load(f)
    raw = HexBytes(printed["rawTransaction"])
    decoded = TypedTransaction.from_bytes(raw)
    fields = decoded.as_dict()
    built = printed["transaction"]
    problems = []
    if fields["type"] != 2 or decoded.transaction_type != 2:
        problems.append(f"type {fields['type']}, not 2 (EIP-1559)")
    for name in ("chainId", "nonce", "maxPriorityFeePerGas", "maxFeePerGas", "gas", "value"):
        if fields[name] != built[name]:
            problems.append(f"{name} decodes as {fields[name]}, built {built[name]}")
    if to_checksum_address(fields["to"]) != built["to"]:
        problems.append(f"to decodes as {to_checksum_address(fields['to'])}, built {built['to']}")
    if fields["data"] != HexBytes(built["data"]):
        problems.append(f"data decodes as 0x{bytes(fields['data']).hex()}, built {built['data']}")
    if list(fields["accessList"]) != built["accessList"]:
        problems.append(f"accessList decodes as {fields['accessList']}, built {built['accessList']}")
    if decoded.encode() != bytes(raw):
        problems.append("eth-account re-encodes the transaction to other bytes (non-canonical RLP)")
    if decoded.hash() != HexBytes(printed["signingHash"]):
        problems.append(f"signing hash is 0x{decoded.hash().hex()}, the program signed {printed['signingHash']}")
    if fields["v"] not in (0, 1) or not 0 < fields["s"] <= N // 2:
        problems.append(f"yParity {fields['v']} or s {fields['s']:x} out of range (EIP-2 low s)")
    key_address = keys.PublicKey.from_compressed_bytes(bytes.fromhex(printed["publicKey"])).to_checksum_address()
    if printed["address"] != key_address:
        problems.append(f"address {printed['address']} is not the public key's {key_address} (EIP-55)")
    sender = Account.recover_transaction(raw)
    if sender != printed["address"]:
        problems.append(f"eth-account recovers sender {sender}, the wallet is {printed['address']}")
    for problem in problems:
        print(f"FAILED eip1559-transfer: {problem}", file=sys.stderr)
    if not problems:
        print(f"eip1559-transfer: eth-account decodes the transfer and recovers the wallet {sender} as its sender")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
