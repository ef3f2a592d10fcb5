import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// `derive`, `sign --path/--taproot` and `verify --path/--taproot` through the binary (docs/derivation.md).
@Suite("share-recovery derive, sign --path --taproot, verify")
struct DeriveCLITests {
    private func sh(_ arguments: [String], in dir: URL) throws -> CLIRun {
        try CLIRunner.run("share-recovery", arguments, in: dir)
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private func wallet(_ curve: String, in dir: URL) throws {
        let run = try sh(
            [
                "keygen", "--dkg", "--curve", curve, "--wallet-id", "w-derive", "--threshold", "2", "--parties", "3",
                "--out", curve,
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test(
        "derive prints the child key, chain code and xpub that the library and a watch-only xpub agree on; sign and verify use them"
    )
    func deriveSignVerify() throws {
        let dir = try CLIRunner.temporaryDirectory()
        try wallet("secp256k1", in: dir)
        try Data("a sighash".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        let share = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("secp256k1/share-1.json"), encoding: .utf8))
        let wallet = share.publicKey

        var run = try sh(["derive", "--path", "m/0/1", "--signing-share", "secp256k1/share-1.json"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let derived = try json(run.stdout)
        let expected = try DerivedKey(walletPublicKey: wallet, path: DerivationPath("m/0/1"))
        #expect(derived["walletPublicKey"] as? String == wallet.hex)
        #expect(derived["path"] as? String == "m/0/1")
        #expect(derived["publicKey"] as? String == expected.publicKey.hex)
        #expect(derived["xOnlyPublicKey"] as? String == Hex.encode(expected.publicKey.xOnlyRepresentation))
        #expect(derived["chainCode"] as? String == Hex.encode(expected.chainCode))
        #expect(derived["xpub"] as? String == expected.extendedKey.serialized)
        #expect((derived["tweaks"] as? [String])?.count == 2)
        #expect(derived["outputKey"] == nil)
        // A watch-only wallet given only rootXpub derives the same xpub.
        let root = try ExtendedPublicKey(serialized: try #require(derived["rootXpub"] as? String))
        #expect(
            root.publicKey == wallet && root.chainCode == ExtendedPublicKey.aggregateKeyChainCode && root.depth == 0)
        #expect(try root.child(at: 0).key.child(at: 1).key.serialized == derived["xpub"] as? String)

        // The same from the key as hex, with Taproot.
        run = try sh(["derive", "--path", "m/0/1", "--public-key", wallet.hex, "--taproot"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let taproot = try json(run.stdout)
        #expect(taproot["xpub"] as? String == derived["xpub"] as? String)
        let outputKey = try Taproot.outputKey(internalKey: expected.publicKey)
        #expect(taproot["outputKey"] as? String == Hex.encode(outputKey.xOnlyRepresentation))
        #expect(taproot["scriptPubKey"] as? String == "5120" + Hex.encode(outputKey.xOnlyRepresentation))

        // sign --path --taproot with parties 1 and 3: a BIP-340 signature under the output key.
        run = try sh(
            [
                "sign", "--signing-share", "secp256k1/share-1.json", "--signing-share", "secp256k1/share-3.json",
                "--message-file", "msg.bin",
                "--path", "m/0/1", "--taproot",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let signed = try json(run.stdout)
        let signature = try #require(signed["signature"] as? String)
        #expect(signed["publicKey"] as? String == wallet.hex)
        #expect(signed["path"] as? String == "m/0/1" && signed["taproot"] as? Bool == true)
        #expect(signed["signingKey"] as? String == outputKey.hex)
        #expect(
            FrostBIP340.verify(
                signature: try #require(Hex.decode(signature)), message: Array("a sighash".utf8),
                xOnlyKey: outputKey.xOnlyRepresentation))

        // verify: from the wallet key with the same tweaks, or from the output key itself (x-only or compressed).
        let base = ["verify", "--curve", "secp256k1", "--message-file", "msg.bin", "--signature", signature]
        for (arguments, status) in [
            (["--public-key", wallet.hex, "--path", "m/0/1", "--taproot"], Int32(0)),
            (["--public-key", Hex.encode(outputKey.xOnlyRepresentation)], 0), (["--public-key", outputKey.hex], 0),
            (["--public-key", wallet.hex], 1), (["--public-key", wallet.hex, "--path", "m/0/1"], 1),
            (["--public-key", wallet.hex, "--path", "m/0/2", "--taproot"], 1),
        ] {
            run = try sh(base + arguments, in: dir)
            #expect(run.status == status, "\(arguments): \(run.stderr)")
        }

        // A derived key without Taproot: the child's own x-only key.
        run = try sh(
            [
                "sign", "--signing-share", "secp256k1/share-2.json", "--signing-share", "secp256k1/share-3.json",
                "--message-file", "msg.bin",
                "--path", "m/0/1",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let child = try json(run.stdout)
        #expect(child["signingKey"] as? String == expected.publicKey.hex && child["taproot"] as? Bool == false)
        run = try sh(
            [
                "verify", "--curve", "secp256k1", "--message-file", "msg.bin", "--signature",
                try #require(child["signature"] as? String),
                "--public-key", wallet.hex, "--path", "m/0/1",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("a hardened step, a malformed path, ed25519 and mode rfc9591 are refused with their reasons")
    func refusals() throws {
        let dir = try CLIRunner.temporaryDirectory()
        try wallet("secp256k1", in: dir)
        try wallet("ed25519", in: dir)
        try Data("m".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        let secpSigners = [
            "--signing-share", "secp256k1/share-1.json", "--signing-share", "secp256k1/share-2.json", "--message-file",
            "msg.bin",
        ]
        let edSigners = [
            "--signing-share", "ed25519/share-1.json", "--signing-share", "ed25519/share-2.json", "--message-file",
            "msg.bin",
        ]
        let cases: [(arguments: [String], status: Int32, needle: String)] = [
            (["derive", "--path", "m/0'", "--signing-share", "secp256k1/share-1.json"], 2, "hardened"),
            (["derive", "--path", "m/0/2147483648", "--signing-share", "secp256k1/share-1.json"], 2, "2^31"),
            (["derive", "--path", "0/1", "--signing-share", "secp256k1/share-1.json"], 2, "starts with m"),
            (["sign", "--path", "m/44h/0"] + secpSigners, 2, "hardened"),
            (["derive", "--path", "m/0", "--signing-share", "ed25519/share-1.json"], 2, "ed25519"),
            (["derive", "--path", "m/0", "--public-key", String(repeating: "ab", count: 32)], 2, "33-byte"),
            (["sign", "--path", "m/0"] + edSigners, 2, "ed25519"),
            (["sign", "--taproot"] + edSigners, 2, "ed25519"),
            (["sign", "--path", "m/0", "--mode", "rfc9591"] + secpSigners, 2, "bip340"),
            (["sign", "--taproot", "--mode", "rfc9591"] + secpSigners, 2, "bip340"),
            (["derive", "--path", "m/0"], 2, "--signing-share"),
            (
                ["derive", "--path", "m/0", "--signing-share", "secp256k1/share-1.json", "--public-key", "02"], 2,
                "--signing-share"
            ),
        ]
        for test in cases {
            let run = try sh(test.arguments, in: dir)
            #expect(run.status == test.status, "\(test.arguments): \(run.stderr)")
            #expect(run.stderr.contains(test.needle), "\(test.arguments): \(run.stderr)")
            if test.needle != "--signing-share" {
                // A path or mode the key does not take is a usage error that keeps the engine's code.
                #expect(run.stderr.contains("error: invalidParameters"), "\(test.arguments): \(run.stderr)")
            }
        }
    }
}
