import ShareCrypto
import TestSupport
import Testing

/// `bip-0341/wallet-test-vectors.json`: the cases without a script tree.
private struct BIP341File: Decodable, Sendable {
    struct ScriptPubKeyCase: Decodable, Sendable {
        struct Given: Decodable, Sendable { let internalPubkey: HexBytes }
        struct Intermediary: Decodable, Sendable {
            let tweak: HexBytes
            let tweakedPubkey: HexBytes
        }
        struct Expected: Decodable, Sendable { let scriptPubKey: HexBytes }
        let given: Given
        let intermediary: Intermediary
        let expected: Expected
    }
    struct KeyPathCase: Decodable, Sendable {
        struct Utxo: Decodable, Sendable { let scriptPubKey: HexBytes }
        struct Input: Decodable, Sendable {
            struct Given: Decodable, Sendable { let internalPrivkey: HexBytes }
            struct Intermediary: Decodable, Sendable {
                let internalPubkey: HexBytes
                let tweak: HexBytes
                let tweakedPrivkey: HexBytes
                let sigHash: HexBytes
            }
            struct Expected: Decodable, Sendable { let witness: [HexBytes] }
            let given: Given
            let intermediary: Intermediary
            let expected: Expected
        }
        let utxoSpent: Utxo
        let inputSpending: Input
    }
    let scriptPubKey: [ScriptPubKeyCase]
    let keyPathSpending: [KeyPathCase]
}

@Suite("BIP-341 Taproot output keys without a script tree")
struct TaprootVectorTests {
    @Test("scriptPubKey cases: internal key → TapTweak → output key → OP_1 <key>")
    func scriptPubKey() throws {
        let file = try VectorFile.load("bip-0341/wallet-test-vectors.json", as: BIP341File.self)
        #expect(file.scriptPubKey.count == 1)
        for test in file.scriptPubKey {
            let internalKey = try Point(xOnly: test.given.internalPubkey.bytes)
            #expect(
                try Taproot.tweak(internalKey: internalKey).rawRepresentation.revealedBytes()
                    == test.intermediary.tweak.bytes)
            let output = try Taproot.outputKey(internalKey: internalKey)
            #expect(output.xOnlyRepresentation == test.intermediary.tweakedPubkey.bytes)
            #expect([0x51, 0x20] + output.xOnlyRepresentation == test.expected.scriptPubKey.bytes)
            // Only the x coordinate of the internal key counts: its odd-y twin has the same output key.
            #expect(try Taproot.outputKey(internalKey: internalKey.negated) == output)
        }
    }

    @Test(
        "keyPathSpending: the output key of the internal private key's public key is the spent output's, and the published signature verifies under it"
    )
    func keyPathSpending() throws {
        let file = try VectorFile.load("bip-0341/wallet-test-vectors.json", as: BIP341File.self)
        #expect(file.keyPathSpending.count == 1)
        for test in file.keyPathSpending {
            let input = test.inputSpending
            let secret = try Scalar(rawRepresentation: input.given.internalPrivkey.bytes, curve: .secp256k1)
            let internalKey = try Point(generatorTimes: secret)
            #expect(internalKey.xOnlyRepresentation == input.intermediary.internalPubkey.bytes)
            #expect(
                try Taproot.tweak(internalKey: internalKey).rawRepresentation.revealedBytes()
                    == input.intermediary.tweak.bytes)
            let output = try Taproot.outputKey(internalKey: internalKey)
            #expect([0x51, 0x20] + output.xOnlyRepresentation == test.utxoSpent.scriptPubKey.bytes)
            let tweakedSecret = try Scalar(
                rawRepresentation: input.intermediary.tweakedPrivkey.bytes, curve: .secp256k1)
            #expect(try Point(generatorTimes: tweakedSecret).xOnlyRepresentation == output.xOnlyRepresentation)
            // The witness is the 64-byte signature and a sighash-type byte (not SIGHASH_DEFAULT).
            let witness = try #require(input.expected.witness.first).bytes
            #expect(witness.count == 65)
            let signature = Array(witness.prefix(64))
            #expect(
                FrostBIP340.verify(
                    signature: signature, message: input.intermediary.sigHash.bytes,
                    xOnlyKey: output.xOnlyRepresentation))
            #expect(
                !FrostBIP340.verify(
                    signature: signature, message: input.intermediary.sigHash.bytes,
                    xOnlyKey: internalKey.xOnlyRepresentation))
        }
    }
}
