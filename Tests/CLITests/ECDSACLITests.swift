import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// `sign --mode ecdsa`, `verify --mode ecdsa` and `derive --address` through the binary. What `sign`
/// prints is checked here by libsecp256k1's verify and public-key recovery (ShareCrypto), never by
/// the command that made it; `verify` and `derive --address` are held to published examples.
@Suite("share-recovery sign/verify --mode ecdsa, derive --address")
struct ECDSACLITests {
    private func sh(_ arguments: [String], in dir: URL) throws -> CLIRun {
        try CLIRunner.run("share-recovery", arguments, in: dir)
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    private func hex(_ value: Any?) throws -> [UInt8] {
        let text = try #require(value as? String)
        return try #require(Hex.decode(text))
    }

    private func sign(_ shares: [String], _ extra: [String], in dir: URL) throws -> [String: Any] {
        let run = try sh(
            ["sign", "--mode", "ecdsa", "--message-file", "msg.bin"] + shares.flatMap { ["--signing-share", $0] }
                + extra, in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        return try json(run.stdout)
    }

    /// n/2 of secp256k1, big-endian: the largest low s.
    private static let halfOrder = Hex.decode("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0")!

    /// Checks `sign`'s output on its own terms: every field's form, low s, the DER, and that
    /// libsecp256k1 verifies it under `key` and recovers `key` from (digest, r, s, recoveryId).
    private func checkSigned(_ signed: [String: Any], digest: [UInt8], key: Point) throws {
        #expect(Set(signed.keys) == ["publicKey", "mode", "digest", "r", "s", "recoveryId", "signature", "der"])
        #expect(signed["mode"] as? String == "ecdsa")
        #expect(signed["publicKey"] as? String == key.hex)
        #expect(try hex(signed["digest"]) == digest)
        let r = try hex(signed["r"]), s = try hex(signed["s"])
        let recoveryId = try #require(signed["recoveryId"] as? Int)
        #expect(r.count == 32 && s.count == 32 && (0...1).contains(recoveryId))
        #expect(try hex(signed["signature"]) == r + s)
        #expect(!Self.halfOrder.lexicographicallyPrecedes(s), "s is above n/2")
        for text in ["publicKey", "digest", "r", "s", "signature", "der"] {
            let value = try #require(signed[text] as? String)
            #expect(value == value.lowercased() && !value.hasPrefix("0x"), "\(text) is not lowercase hex")
        }
        let signature = try ECDSASignature(r: r, s: s, recoveryId: UInt8(recoveryId))
        #expect(signature.s == s, "the value type would have normalised a high s")
        #expect(signature.isValid(digest: digest, publicKey: key))
        #expect(try signature.recoverPublicKey(digest: digest) == key)
        let der = try ECDSASignature(der: try hex(signed["der"]), recoveryId: UInt8(recoveryId))
        #expect(der.r == r && der.s == s)
    }

    @Test("every pair of a DKG-made 2-of-3 signs; verify takes each form; --path signs for derive's child")
    func everyPairOfTwoOfThree() throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let message = Array("an EIP-1559 signing payload".utf8)
        try Data(message).write(to: dir.appendingPathComponent("msg.bin"))
        var run = try sh(
            [
                "keygen", "--dkg", "--curve", "secp256k1", "--wallet-id", "w-ecdsa", "--threshold", "2", "--parties",
                "3", "--out", "wallet",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let wallet = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("wallet/share-2.json"), encoding: .utf8)
        ).publicKey
        let child = try DerivedKey(walletPublicKey: wallet, path: DerivationPath("m/0/1")).publicKey

        // Each pair once, with each --hash and a path, so no case costs a signature of its own.
        let keccak = try sign(["wallet/share-1.json", "wallet/share-2.json"], [], in: dir)
        try checkSigned(keccak, digest: Keccak256.hash(message), key: wallet)
        let sha256d = try sign(["wallet/share-3.json", "wallet/share-1.json"], ["--hash", "sha256d"], in: dir)
        try checkSigned(sha256d, digest: SHA256.hash(SHA256.hash(message)), key: wallet)
        let derived = try sign(["wallet/share-2.json", "wallet/share-3.json"], ["--path", "m/0/1"], in: dir)
        try checkSigned(derived, digest: Keccak256.hash(message), key: child)

        // verify: every accepted form is valid; a flipped byte, the wrong recovery id and the wrong hash are not.
        let verify = ["verify", "--mode", "ecdsa", "--public-key", wallet.hex, "--message-file", "msg.bin"]
        let compact = try #require(keccak["signature"] as? String)
        let recoveryId = try #require(keccak["recoveryId"] as? Int)
        for form in [compact, try #require(keccak["der"] as? String), compact + "0\(recoveryId)"] {
            run = try sh(verify + ["--signature", form], in: dir)
            #expect(run.status == 0 && run.stdout == "{\"valid\":true}\n", "\(form): \(run.stderr)")
        }
        var flipped = Array(compact)
        flipped[10] = flipped[10] == "0" ? "1" : "0"
        for (signature, reason) in [
            (String(flipped), "does not verify"), (compact + "0\(1 - recoveryId)", "recovers another key"),
        ] {
            run = try sh(verify + ["--signature", signature], in: dir)
            #expect(run.status == 1 && run.stdout == "{\"valid\":false}\n")
            #expect(run.stderr.contains("error: invalidSignature") && run.stderr.contains(reason), "\(run.stderr)")
        }
        run = try sh(verify + ["--signature", try #require(sha256d["der"] as? String), "--hash", "sha256d"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        run = try sh(verify + ["--signature", try #require(sha256d["signature"] as? String)], in: dir)
        #expect(run.status == 1, "a sha256d signature checked over the keccak256 digest")

        // --path: the wallet key and the path, or the child key itself; derive shows the same child.
        let derivedSignature = try #require(derived["signature"] as? String)
        run = try sh(verify + ["--signature", derivedSignature, "--path", "m/0/1"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        run = try sh(
            ["verify", "--mode", "ecdsa", "--public-key", child.hex, "--message-file", "msg.bin", "--signature"]
                + [derivedSignature], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        run = try sh(
            ["derive", "--path", "m/0/1", "--signing-share", "wallet/share-1.json", "--address", "eth"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let child1 = try json(run.stdout)
        #expect(child1["publicKey"] as? String == derived["publicKey"] as? String)
        // The address is the one ecrecover finds for the signer.
        let recovered = try ECDSASignature(
            compact: try hex(derived["signature"]), recoveryId: UInt8(try #require(derived["recoveryId"] as? Int))
        ).recoverPublicKey(digest: try hex(derived["digest"]))
        #expect(child1["address"] as? String == (try EthereumAddress.checksummed(recovered)))
        #expect(child1["address"] as? String == (try EthereumAddress.checksummed(child)))
    }

    @Test(
        "a 2-of-2 signs a raw digest, and again after a recovery; wrong shares, curve, count, digest size, --server are refused"
    )
    func twoOfTwoAndRefusals() throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let digest = (0..<32).map { UInt8($0 * 7) }
        try Data(digest).write(to: dir.appendingPathComponent("msg.bin"))
        try Data(digest.dropLast()).write(to: dir.appendingPathComponent("short.bin"))
        try Data((0..<32).map { UInt8($0) }).write(to: dir.appendingPathComponent("cloud.key"))
        for arguments in [
            ["keygen", "--dkg", "--curve", "secp256k1", "--wallet-id", "w-1", "--out", "wallet"],
            ["keygen", "--curve", "secp256k1", "--wallet-id", "w-2", "--out", "other"],
            ["keygen", "--curve", "ed25519", "--wallet-id", "w-3", "--out", "ed"],
            ["custodian", "keypair", "--out", "custodian"],
            [
                "backup", "--signing-share", "wallet/share-1.json", "--signing-share", "wallet/share-2.json",
                "--method", "cloudKey", "--secret-file", "cloud.key", "--custodian-pub", "custodian/custodian.pub",
                "--out", "backup",
            ],
            [
                "recover", "--cipher-text", "backup/cipherText", "--secret-file", "cloud.key", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out",
                "recovered",
            ],
        ] {
            let run = try sh(arguments, in: dir)
            #expect(run.status == 0, "\(arguments[0]): \(run.stderr)")
        }
        let wallet = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("wallet/share-1.json"), encoding: .utf8)
        ).publicKey
        let signed = try sign(["wallet/share-1.json", "wallet/share-2.json"], ["--hash", "none"], in: dir)
        try checkSigned(signed, digest: digest, key: wallet)
        // The recovered set (the next generation) signs under the same key, over fresh pair setups.
        let again = try sign(["recovered/share-2.json", "recovered/share-1.json"], ["--hash", "none"], in: dir)
        try checkSigned(again, digest: digest, key: wallet)

        let signHint = "hint: give t --signing-share files of one wallet's current signing set"
        for (shares, extra, status, expected) in [
            (["wallet/share-1.json", "other/share-2.json"], [], 1, ["invalidParameters", "two wallets", signHint]),
            (["wallet/share-1.json", "recovered/share-2.json"], [], 1, ["invalidParameters", "generation", signHint]),
            (["wallet/share-1.json"], [], 1, ["invalidParameters", "needs exactly 2", signHint]),
            (["ed/share-1.json", "ed/share-2.json"], [], 2, ["invalidParameters", "secp256k1 only"]),
            (
                ["wallet/share-1.json", "wallet/share-2.json"], ["--hash", "none", "--message-file", "short.bin"], 2,
                ["invalidParameters", "the file has 31"]
            ),
            (["wallet/share-1.json"], ["--server", "http://127.0.0.1:1"], 2, ["with --server give --user-id"]),
            (["wallet/share-1.json", "wallet/share-2.json"], ["--user-id", "u"], 2, ["go with --server"]),
            (["wallet/share-1.json", "wallet/share-2.json"], ["--taproot"], 2, ["usage", "--taproot"]),
        ] as [([String], [String], Int32, [String])] {
            let run = try sh(
                ["sign", "--mode", "ecdsa", "--message-file", "msg.bin"]
                    + shares.flatMap { ["--signing-share", $0] } + extra, in: dir)
            #expect(run.status == status, "\(shares) \(extra): \(run.stderr)")
            #expect(run.stdout.isEmpty)
            for text in expected { #expect(run.stderr.contains(text), "\(shares) \(extra): \(run.stderr)") }
        }
        // An ed25519 wallet has no address.
        var run = try sh(["derive", "--signing-share", "ed/share-1.json", "--address", "eth"], in: dir)
        #expect(run.status == 2 && run.stderr.contains("secp256k1 wallets"), "\(run.stderr)")
        // --hash belongs to mode ecdsa.
        run = try sh(
            [
                "sign", "--signing-share", "wallet/share-1.json", "--signing-share", "wallet/share-2.json",
                "--message-file", "msg.bin", "--hash", "sha256d",
            ], in: dir)
        #expect(run.status == 2 && run.stderr.contains("--hash is for --mode ecdsa"), "\(run.stderr)")
    }

    // EIP-155's example transfer: secret key 0x46…46 signs it on chain 1 with recovery id 0.
    private static let eip155Key = [UInt8](repeating: 0x46, count: 32)
    private static let eip155Payload =
        "ec098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a764000080018080"
    private static let eip155Signature =
        "28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276"
        + "67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83"
    /// n − s of that signature: the same signature with a high s.
    private static let eip155HighS =
        "28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276"
        + "98341627668089e51348fccfb4c7ff31c55912f2d2e47ef09652acf665fad3be"

    @Test("verify takes EIP-155's published signature and refuses its high-s twin; addresses match published ones")
    func publishedExamples() throws {
        let dir = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(try #require(Hex.decode(Self.eip155Payload))).write(to: dir.appendingPathComponent("msg.bin"))
        let key = try Point(generatorTimes: Scalar(rawRepresentation: Self.eip155Key, curve: .secp256k1))
        let verify = ["verify", "--mode", "ecdsa", "--public-key", key.hex, "--message-file", "msg.bin"]
        var run = try sh(verify + ["--signature", Self.eip155Signature + "00"], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        run = try sh(verify + ["--signature", Self.eip155HighS], in: dir)
        #expect(run.status == 1 && run.stderr.contains("high s"), "\(run.stderr)")
        // The high-s twin is the same (r, s) otherwise: the value type normalises it back.
        let twin = try ECDSASignature(compact: try #require(Hex.decode(Self.eip155HighS)), recoveryId: 1)
        #expect(Hex.encode(twin.compact) == Self.eip155Signature && twin.recoveryId == 0)
        run = try sh(verify + ["--signature", Self.eip155Signature, "--curve", "ed25519"], in: dir)
        #expect(run.status == 2, "\(run.stderr)")

        // EIP-155's sender, and BIP-173's P2WPKH examples for the generator (secret key 1).
        run = try sh(["derive", "--public-key", key.hex, "--address", "eth"], in: dir)
        #expect(try json(run.stdout)["address"] as? String == "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F")
        let generator = Point.generator(on: .secp256k1).hex
        for (network, address) in [
            ([], "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"),
            (["--network", "testnet"], "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"),
        ] {
            run = try sh(["derive", "--public-key", generator, "--address", "p2wpkh"] + network, in: dir)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try json(run.stdout)["address"] as? String == address)
        }
        for (arguments, reason) in [
            (["--address", "eth", "--network", "testnet"], "leave --network out"),
            (["--network", "testnet"], "is for --address p2wpkh"),
            (["--address", "p2wpkh", "--network", "regtest"], "mainnet or testnet"),
            (["--address", "p2wpkh", "--taproot"], "P2TR"),
        ] {
            run = try sh(["derive", "--public-key", generator] + arguments, in: dir)
            #expect(run.status == 2 && run.stderr.contains(reason), "\(arguments): \(run.stderr)")
        }
    }
}
