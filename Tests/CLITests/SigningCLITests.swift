import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// `keygen --dkg`, `sign` and `verify` through the binary: a wallet born without a dealer signs
/// before and after a recovery, and the old device share is refused.
@Suite("share-recovery keygen --dkg, sign, verify")
struct SigningCLITests {
    private func sh(_ arguments: [String], in dir: URL) throws -> CLIRun {
        try CLIRunner.run("share-recovery", arguments, in: dir)
    }

    private func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test(arguments: [("secp256k1", nil), ("secp256k1", "rfc9591"), ("ed25519", nil)] as [(String, String?)])
    func dkgSignRecoverSignAgain(curve: String, mode: String?) throws {
        let dir = try CLIRunner.temporaryDirectory()
        try Data("pay bob 1 coin".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        var run = try sh(
            [
                "keygen", "--dkg", "--curve", curve, "--wallet-id", "w-dkg", "--threshold", "2", "--parties", "2",
                "--out", "wallet",
            ], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!run.stderr.contains("development tool"), "a DKG is not labelled as a dealer")
        let modeArguments = mode.map { ["--mode", $0] } ?? []
        run = try sh(
            [
                "sign", "--signing-share", "wallet/share-1.json", "--signing-share", "wallet/share-2.json",
                "--message-file", "msg.bin",
            ]
                + modeArguments, in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let signed = try json(run.stdout)
        let publicKey = try #require(signed["publicKey"] as? String),
            signature = try #require(signed["signature"] as? String)
        let share = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("wallet/share-1.json"), encoding: .utf8))
        #expect(publicKey == share.publicKey.hex)

        let verify =
            ["verify", "--curve", curve, "--public-key", publicKey, "--message-file", "msg.bin"] + modeArguments
        run = try sh(verify + ["--signature", signature], in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        // One flipped bit in the signature: exit 1 and the reason.
        var flipped = Array(signature)
        flipped[flipped.count - 1] = flipped.last == "0" ? "1" : "0"
        run = try sh(verify + ["--signature", String(flipped)], in: dir)
        #expect(run.status == 1)
        #expect(run.stderr.contains("error: invalidSignature"))

        // Back up with a cloud key, recover offline, sign again under the same key.
        try Data((0..<32).map { UInt8($0) }).write(to: dir.appendingPathComponent("cloud.key"))
        for arguments in [
            ["custodian", "keypair", "--out", "custodian"],
            [
                "backup", "--signing-share", "wallet/share-1.json", "--signing-share", "wallet/share-2.json",
                "--method", "cloudKey",
                "--secret-file", "cloud.key", "--custodian-pub", "custodian/custodian.pub", "--out", "backup",
            ],
            [
                "recover", "--cipher-text", "backup/cipherText", "--secret-file", "cloud.key", "--custodian-shares",
                "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key", "--out",
                "recovered",
            ],
        ] {
            run = try sh(arguments, in: dir)
            #expect(run.status == 0, "\(arguments[0]): \(run.stderr)")
        }
        run = try sh(
            [
                "sign", "--signing-share", "recovered/share-1.json", "--signing-share", "recovered/share-2.json",
                "--message-file", "msg.bin",
            ]
                + modeArguments, in: dir)
        #expect(run.status == 0, "\(run.stderr)")
        let again = try json(run.stdout)
        #expect(again["publicKey"] as? String == publicKey)
        run = try sh(verify + ["--signature", try #require(again["signature"] as? String)], in: dir)
        #expect(run.status == 0, "\(run.stderr)")

        // The lost device's share beside the recovered custodian share: a clear refusal.
        run = try sh(
            [
                "sign", "--signing-share", "wallet/share-1.json", "--signing-share", "recovered/share-2.json",
                "--message-file", "msg.bin",
            ],
            in: dir)
        #expect(run.status == 1)
        #expect(run.stderr.contains("error: invalidParameters") && run.stderr.contains("generation"), "\(run.stderr)")
    }

    @Test func badInputsAreNamed() throws {
        let dir = try CLIRunner.temporaryDirectory()
        try Data("m".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        var run = try sh(
            [
                "keygen", "--dkg", "--curve", "ed25519", "--wallet-id", "w", "--threshold", "3", "--parties", "2",
                "--out", "x",
            ], in: dir)
        // Parameters out of range on the command line are a usage error.
        #expect(run.status == 2 && run.stderr.contains("invalidParameters"), "\(run.stderr)")
        run = try sh(["keygen", "--dkg", "--curve", "ed25519", "--wallet-id", "w", "--out", "wallet"], in: dir)
        #expect(run.status == 0)
        run = try sh(["sign", "--signing-share", "wallet/share-1.json", "--message-file", "msg.bin"], in: dir)
        #expect(run.status == 1 && run.stderr.contains("needs 2"), "\(run.stderr)")
        run = try sh(
            [
                "sign", "--signing-share", "wallet/share-1.json", "--signing-share", "wallet/share-2.json",
                "--message-file", "msg.bin", "--mode", "bip340",
            ],
            in: dir)
        #expect(run.status == 2 && run.stderr.contains("secp256k1 only"), "\(run.stderr)")
        run = try sh(["sign", "--message-file", "msg.bin"], in: dir)
        #expect(run.status == 2)
        // --server with the wrong companions is a usage error before any file is read.
        run = try sh(
            ["sign", "--server", "http://127.0.0.1:1", "--signing-share", "missing.json", "--message-file", "msg.bin"],
            in: dir)
        #expect(run.status == 2 && run.stderr.contains("--user-id"), "\(run.stderr)")
        run = try sh(
            ["sign", "--user-id", "u", "--signing-share", "wallet/share-1.json", "--message-file", "msg.bin"], in: dir)
        #expect(run.status == 2, "\(run.stderr)")
        run = try sh(
            ["verify", "--curve", "ed25519", "--public-key", "zz", "--message-file", "msg.bin", "--signature", "00"],
            in: dir)
        #expect(run.status == 2)
        run = try sh(
            [
                "verify", "--curve", "ed25519", "--public-key", String(repeating: "00", count: 32), "--message-file",
                "msg.bin", "--signature", "00",
            ], in: dir)
        #expect(run.status == 1 && run.stderr.contains("invalidPoint"), "\(run.stderr)")
    }
}
