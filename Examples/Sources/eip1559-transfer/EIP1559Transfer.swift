// eip1559-transfer: an Ethereum transfer signed by a 2-of-2 threshold ECDSA wallet, through the public API.
//
// A 2-of-2 secp256k1 wallet is created by distributed key generation; its two parties make their pair
// setup and sign an EIP-1559 (type 2) transaction, whose RLP encoding this example writes itself
// (RLP.swift). Prints one JSON object on stdout: the wallet's `address` (EIP-55) and `publicKey`, the
// `transaction` fields as built (numbers in wei and gas units, `to` and `data` as 0x-hex, as Ethereum's
// JSON-RPC names them), the `signingHash` keccak256(0x02 || rlp(fields)) and `rawTransaction`,
// 0x02 || rlp(fields, yParity, r, s), ready for eth_sendRawTransaction. scripts/examples.sh decodes it
// with eth-account and checks the sender it recovers and every field.

import ExampleSupport
import Foundation
import ShareCrypto
import ShareRecovery

/// The fields of an EIP-1559 transaction with an empty access list, in their signing order.
struct Transfer: Encodable {
    var chainId: UInt64
    var nonce: UInt64
    var maxPriorityFeePerGas: UInt64
    var maxFeePerGas: UInt64
    var gas: UInt64
    var to: String
    var value: UInt64
    var data: String
    var accessList: [String] = []

    /// The type-2 payload's fields; the signature's three follow them in the signed form.
    func fields() throws -> [RLP] {
        [
            .integer(chainId), .integer(nonce), .integer(maxPriorityFeePerGas), .integer(maxFeePerGas),
            .integer(gas), .bytes(try Transfer.bytes(hex: to, count: 20)), .integer(value),
            .bytes(try Transfer.bytes(hex: data, count: nil)), .list([]),
        ]
    }

    private static func bytes(hex: String, count: Int?) throws -> [UInt8] {
        guard hex.hasPrefix("0x"), let bytes = Hex.decode(String(hex.dropFirst(2)).lowercased()),
            count.map({ bytes.count == $0 }) ?? true
        else { throw ShareRecoveryError(.invalidParameters, "\(hex) is not 0x-hex of the right length") }
        return bytes
    }
}

/// What the program prints.
struct Output: Encodable {
    var address: String
    var publicKey: String
    var transaction: Transfer
    var signingHash: String
    var rawTransaction: String
}

/// EIP-2718's type byte of an EIP-1559 transaction.
let transactionType: UInt8 = 0x02

@main
struct EIP1559Transfer {
    static func main() async {
        await runExample {
            // 1. A 2-of-2 wallet by distributed key generation: neither party ever holds the key.
            let shares = try DistributedKeyGeneration.run(
                parameters: DKGParameters(curve: .secp256k1, walletId: "eth-wallet", threshold: 2, parties: 2))
            let wallet = shares[0].publicKey
            let address = try EthereumAddress.checksummed(wallet)

            // 2. The pair setup, made once per pair of parties after the key exists (kept sealed like a share).
            let setups = try ThresholdECDSA.pairSetups(shares: shares)

            // 3. 0.01 ether to a fixed address on Sepolia (chain id 11155111).
            let transfer = Transfer(
                chainId: 11_155_111, nonce: 0, maxPriorityFeePerGas: 1_500_000_000, maxFeePerGas: 30_000_000_000,
                gas: 21_000, to: "0x000000000000000000000000000000000000dEaD", value: 10_000_000_000_000_000,
                data: "0x")
            let fields = try transfer.fields()
            let signingHash = Keccak256.hash([transactionType] + RLP.list(fields).encoded)

            // 4. Both parties sign the hash; the engine never hashes it again.
            let (signature, signingKey) = try ThresholdECDSA.sign(shares: shares, setups: setups, digest: signingHash)
            guard signingKey == wallet, signature.isValid(digest: signingHash, publicKey: wallet) else {
                throw ShareRecoveryError(.ecdsaCheckFailed, "the signature does not verify under the wallet key")
            }
            let signed =
                fields + [
                    .integer(UInt64(signature.recoveryId)), .integer(bigEndian: signature.r),
                    .integer(bigEndian: signature.s),
                ]
            let raw = [transactionType] + RLP.list(signed).encoded

            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let output = Output(
                address: address, publicKey: wallet.hex, transaction: transfer,
                signingHash: "0x" + Hex.encode(signingHash), rawTransaction: "0x" + Hex.encode(raw))
            print(String(decoding: try encoder.encode(output), as: UTF8.self))
        }
    }
}
