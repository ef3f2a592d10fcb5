import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// What the CLI printed, run by run.
final class Transcript {
    var runs: [CLIRun] = []
    var outputs: [String] { runs.flatMap { [$0.stdout, $0.stderr] } }
}

extension CLITests {
    /// Every verb that touches a secret, on success and on failure, without `--reveal-secret`: no
    /// stdout or stderr shows the secret file, a share scalar (signing, user backup, recovered)
    /// or the custodian key, in hex of either case, base64 of either alphabet or
    /// decimal. The same outputs with `--reveal-secret` are found by the same search.
    @Test(arguments: ["secp256k1", "ed25519"], ["password", "cloudKey"])
    func noSecretInAnyOutputWithoutRevealSecret(curve: String, method: String) throws {
        let secret =
            method == "password" ? Data("hygiene pass\u{E9}phrase\n".utf8) : Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
        let transcript = Transcript()
        let (dir, recover) = try story(curve: curve, method: method, secret: secret, transcript: transcript)
        #expect(recover.status == 0, "\(recover.stderr)")
        func run(_ arguments: [String], status: Int32) throws {
            let result = try CLIRunner.run("share-recovery", arguments, in: dir)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            transcript.runs.append(result)
        }
        let wrong = method == "password" ? Data("wrong".utf8) : Data(repeating: 1, count: 32)
        try wrong.write(to: dir.appendingPathComponent("wrong"))
        try Data("482916\n".utf8).write(to: dir.appendingPathComponent("passcode"))
        let custodian = [
            "--custodian-shares", "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key",
        ]
        try run(["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret"], status: 0)
        try run(["select", "--cipher-text", "backup/cipherText", "--secret-file", "secret"] + custodian, status: 0)
        try run(["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "wrong"], status: 1)
        try run(
            ["recover", "--cipher-text", "backup/cipherText", "--secret-file", "wrong", "--out", "again"] + custodian,
            status: 1)
        try run(["kit", "export", "--cipher-text", "backup/cipherText", "--secret-file", "secret"], status: 2)
        let store = ["--store", "store", "--kdf-ops", "1", "--kdf-mem-kib", "8"]
        try run(
            ["store", "init"] + store + [
                "--passcode-file", "passcode", "--confirm-file", "passcode", "--share", "recovered/share-1.json",
            ], status: 0)
        try run(["store", "show"] + store + ["--passcode-file", "passcode"], status: 0)
        try run(["store", "show"] + store + ["--passcode-file", "wrong"], status: 1)

        // (The 6-digit store passcode is too short to search for without matching by chance.)
        var secrets = [SecretForms("secret file", bytes: Array(secret))]
        if method == "password" {
            secrets.append(SecretForms("password line", bytes: Array(secret.dropLast())))
        }
        for path in ["keys/share-1.json", "keys/share-2.json", "recovered/share-1.json", "recovered/share-2.json"] {
            let record = try ShareRecord(json: String(contentsOf: dir.appendingPathComponent(path), encoding: .utf8))
            secrets.append(SecretForms(path, secret: try #require(record.secret).rawRepresentation))
        }
        let keyHex = try String(contentsOf: dir.appendingPathComponent("custodian/custodian.key"), encoding: .utf8)
        secrets.append(
            SecretForms("custodian key", bytes: try #require(Hex.decode(keyHex.trimmingCharacters(in: .newlines)))))
        // The user backup share's scalar, learnt the one way the CLI gives it out.
        let revealed = try CLIRunner.run(
            "share-recovery",
            ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--reveal-secret"], in: dir)
        let userShare = try ShareRecord(json: revealed.stdout.trimmingCharacters(in: .newlines))
        secrets.append(SecretForms("user backup share", secret: try #require(userShare.secret).rawRepresentation))

        #expect(transcript.runs.count == 12)
        for (index, output) in transcript.outputs.enumerated() {
            #expect(SecretForms.leaks(of: secrets, in: output).isEmpty, "output \(index): \(output)")
        }
        #expect(SecretForms.leaks(of: secrets, in: revealed.stdout).contains("user backup share (form 0)"))
    }
}
