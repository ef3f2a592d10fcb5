import Foundation
import ShareCrypto
import ShareRecovery
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
}
