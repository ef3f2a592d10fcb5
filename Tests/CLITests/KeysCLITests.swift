import Foundation
import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

@testable import ShareRecoveryServer

/// `share-recovery keys rotate` on the built binary, beside a running `serve`, on both backends.
@Suite("CLI keys rotate")
struct KeysCLITests {
    @Test("keys rotate --help says what it does, with an example")
    func help() throws {
        let run = try CLIRunner.run("share-recovery", ["keys", "rotate", "--help"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains("--master-key-file") && run.stdout.contains("share-recovery keys rotate --database"))
    }

    @Test(
        "a rotation beside a running server; the old key then leaves the file and the server still starts",
        arguments: AuditCLITests.Database.allCases)
    func rotation(database kind: AuditCLITests.Database) throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var database = "server.sqlite"
        var migrate: [String] = []
        if kind == .postgres {
            let url = try AuditCLITests.Database.postgresURLOrSkip()
            database =
                url + (url.contains("?") ? "&" : "?") + "schema=keys_" + Hex.encode(SystemRandom().bytes(count: 8))
            migrate = ["--migrate"]
        }
        let old = Hex.encode(SystemRandom().bytes(count: 32))
        let new = Hex.encode(SystemRandom().bytes(count: 32))
        let newId = SecretRing.keyId(of: SecureBytes(copying: try #require(Hex.decode(new))))
        for (name, text) in [
            ("old.keys", "\(old)\n"), ("added.keys", "\(old)\n\(new)\n"), ("moved.keys", "\(new)\n\(old)\n"),
            ("new.keys", "\(new)\n"), ("stranger.keys", "\(Hex.encode(SystemRandom().bytes(count: 32)))\n"),
            ("webhook.secret", "\(Hex.encode(SystemRandom().bytes(count: 24)))\n"),
        ] {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        func serve(_ keys: String) throws -> MethodsCLITests.ServerProcess {
            try MethodsCLITests.ServerProcess(
                directory: directory,
                arguments: [
                    "serve", "--port", "0", "--database", database, "--master-key-file", keys, "--webhook-secret-file",
                    "webhook.secret", "--otp-file", "otp.jsonl",
                ] + migrate)
        }
        func rotate(_ keys: String) throws -> CLIRun {
            try CLIRunner.run(
                "share-recovery", ["keys", "rotate", "--database", database, "--master-key-file", keys], in: directory)
        }

        // The first server seals the custodian key under the old key; the rotation's first two steps follow.
        withExtendedLifetime(try serve("old.keys")) {}
        withExtendedLifetime(try serve("added.keys")) {}
        let running = try serve("moved.keys")

        let refused = try rotate("stranger.keys")
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix(
                "error: unknownMasterKey: server_keys (name custodian-x25519) is sealed under master key id "),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains(old) && !refused.stderr.contains(new))

        let rotated = try rotate("moved.keys")
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let result = try StrictJSON.parse(rotated.stdout)
        #expect(result["keyId"] == .string(newId) && result["keys"] == .number("2"), "\(rotated.stdout)")
        #expect(result["resealed"] == .number("1") && result["remaining"] == .number("0"), "\(rotated.stdout)")
        #expect(result["tables"]?["server_keys"]?["values"] == .number("1"), "\(rotated.stdout)")
        #expect(rotated.stderr.contains("server_keys: 1 re-sealed"), "\(rotated.stderr)")
        // The server that ran beside the rotation is still up.
        #expect(running.process.isRunning)
        withExtendedLifetime(running) {}

        // The old key leaves the file: everything opens under the new key alone, and a server starts on it.
        let alone = try rotate("new.keys")
        #expect(alone.status == 0, "\(alone.stderr)")
        #expect(try StrictJSON.parse(alone.stdout)["resealed"] == .number("0"), "\(alone.stdout)")
        let restarted = try serve("new.keys")
        #expect(restarted.base.hasPrefix("http://127.0.0.1:"))
        withExtendedLifetime(restarted) {}
        // A server without the new key no longer starts: nothing is sealed under the old key alone.
        #expect(throws: (any Error).self) { _ = try serve("old.keys") }
    }

    @Test(
        "keys wrap makes a wrapped file once; serve and keys rotate start from it; bad options are usage errors",
        .enabled(if: SoftHSMToken.runs, Comment(rawValue: SoftHSMToken.missingReason)))
    func wrapped() throws {
        let token = try SoftHSMToken()
        defer { token.remove() }
        let directory = URL(fileURLWithPath: token.directory)
        let key = Hex.encode(SystemRandom().bytes(count: 32))
        for (name, text) in [
            ("master.keys", "\(key)\n"), ("token.pin", "\(SoftHSMToken.pin)\n"), ("wrong.pin", "000000\n"),
            ("webhook.secret", "\(Hex.encode(SystemRandom().bytes(count: 24)))\n"),
        ] {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let tokenOptions = [
            "--master-key-pkcs11-module", SoftHSMToken.module, "--master-key-pkcs11-token", SoftHSMToken.tokenLabel,
            "--master-key-pkcs11-key", SoftHSMToken.keyLabel,
        ]
        func run(_ arguments: [String]) throws -> CLIRun {
            try CLIRunner.run("share-recovery", arguments, in: directory)
        }
        let wrap =
            ["keys", "wrap", "--master-key-file", "master.keys", "--output", "master.wrapped"] + tokenOptions + [
                "--master-key-pkcs11-pin-file", "token.pin",
            ]

        let wrapped = try run(wrap)
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        #expect(try StrictJSON.parse(wrapped.stdout)["output"] == .string("master.wrapped"), "\(wrapped.stdout)")
        let file = directory.appendingPathComponent("master.wrapped").path
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.hasPrefix("share-recovery-master-keys pkcs11-aes-gcm v1 ") && !text.contains(key))
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Never over an existing file.
        let again = try run(wrap)
        #expect(again.status != 0 && again.stderr.contains("never overwrites"), "\(again.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == text)

        // serve unwraps it at start and seals the custodian key under it; keys rotate opens that key.
        let server = try MethodsCLITests.ServerProcess(
            directory: directory,
            arguments: [
                "serve", "--port", "0", "--database", "server.sqlite", "--master-key-pkcs11", "master.wrapped",
                "--master-key-pkcs11-pin-file", "token.pin", "--webhook-secret-file", "webhook.secret", "--otp-file",
                "otp.jsonl",
            ] + tokenOptions)
        #expect(server.base.hasPrefix("http://127.0.0.1:"))
        let rotate = ["keys", "rotate", "--database", "server.sqlite", "--master-key-pkcs11", "master.wrapped"]
        let rotated = try run(rotate + tokenOptions + ["--master-key-pkcs11-pin-file", "token.pin"])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try StrictJSON.parse(rotated.stdout)["remaining"] == .number("0"), "\(rotated.stdout)")
        withExtendedLifetime(server) {}

        // A wrong PIN is named, and the PIN is not.
        let wrongPin = try run(rotate + tokenOptions + ["--master-key-pkcs11-pin-file", "wrong.pin"])
        #expect(wrongPin.status == 1 && wrongPin.stderr.hasPrefix("error: pkcs11PinIncorrect:"), "\(wrongPin.stderr)")
        #expect(!wrongPin.stderr.contains("000000") && !wrongPin.stderr.contains(SoftHSMToken.pin))
        // Both key sources, or token options without a wrapped file, or a wrapped file without them.
        for (arguments, says) in [
            (rotate + tokenOptions + ["--master-key-file", "master.keys"], "not both"),
            (
                ["keys", "rotate", "--database", "server.sqlite", "--master-key-file", "master.keys"] + tokenOptions,
                "need --master-key-pkcs11"
            ),
            (rotate, "--master-key-pkcs11 needs --master-key-pkcs11-module"),
        ] {
            let refused = try run(arguments)
            #expect(refused.status == 2 && refused.stderr.contains(says), "\(arguments): \(refused.stderr)")
        }
    }
}
