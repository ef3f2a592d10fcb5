import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer
import Testing
import TestSupport

/// An ECDSA wallet's whole life through the binary, against a reference server on each backend
/// (docs/ecdsa.md "Through the server"): created by DKG with its Ethereum address, signing over the
/// pair setup it keeps, backed up, lost, recovered, signing again under the same address, a second
/// device added, signing and removed, then ejected. Every signature goes through
/// scripts/independent-verify-ecdsa.py (coincurve, OpenSSL, address recovery), and the ejected key
/// through eth-account.
@Suite("ECDSA wallet lifecycle through the CLI", .serialized)
struct ECDSALifecycleCLITests {
    typealias Database = AuditCLITests.Database

    /// The server in this process (its OTP limits loosened: the story asks for six purposes of one
    /// user, the standard limit is five flows per 15 minutes), and the binary run against it.
    struct World {
        let dir: URL
        let server: RunningServer
        let base: String
        let user = "ecdsa-life"

        init(database: Database) async throws {
            dir = try CLIRunner.temporaryDirectory()
            let location: ServerConfiguration.Database
            switch database {
            case .sqlite: location = .sqlite(path: dir.appendingPathComponent("server.sqlite").path)
            case .postgres:
                let url = try Database.postgresURLOrSkip()
                let schema = "cli_" + Hex.encode(SystemRandom().bytes(count: 8))
                location = .postgres(url: url + (url.contains("?") ? "&" : "?") + "schema=" + schema)
            }
            let webhookSecret = Hex.encode(SystemRandom().bytes(count: 24))
            try Data((webhookSecret + "\n").utf8).write(to: dir.appendingPathComponent("webhook.secret"))
            var logger = Logger(label: "ecdsa-lifecycle-cli-tests")
            logger.logLevel = .critical
            let loose = ServerConfiguration.RateLimit(limit: 100, windowSeconds: 900)
            var configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, database: location,
                masterKey: .value(SystemRandom().secureBytes(count: 32)),
                webhookSecret: .value(SecureBytes(copying: Array(webhookSecret.utf8))),
                otpSender: FileOTPSender(path: dir.appendingPathComponent("otp.jsonl").path),
                rateLimits: .init(
                    verifyPerIdentifier: loose, verifyPerAddress: loose, flowCreationPerIdentifier: loose,
                    flowCreationPerAddress: loose),
                logger: logger)
            configuration.postgres.migrateAtStart = true
            server = try await RunningServer.start(configuration)
            base = server.baseURL()
        }

        func run(_ arguments: [String]) throws -> CLIRun {
            try CLIRunner.run("share-recovery", arguments, in: dir)
        }

        /// Runs and requires exit status 0; the printed JSON.
        func succeed(_ arguments: [String]) throws -> String {
            let result = try run(arguments)
            try #require(result.status == 0, "\(arguments.prefix(3)): \(result.stderr)")
            return result.stdout.trimmingCharacters(in: .newlines)
        }

        /// A token through `otp start` / `otp verify`, the code read from the server's file sender.
        func token(_ purpose: String) throws -> String {
            let started = try succeed([
                "otp", "start", "--server", base, "--identifier", user, "--purpose", purpose,
            ])
            guard case .string(let flowId)? = try StrictJSON.parse(started)["flowId"] else {
                throw MethodsCLITests.CLIError.noCode
            }
            let code = try FileOTPSender(path: dir.appendingPathComponent("otp.jsonl").path).code(flowId: flowId)
            try Data(code.revealedBytes()).write(to: dir.appendingPathComponent("code"))
            let file = "token-\(purpose)"
            _ = try succeed([
                "otp", "verify", "--server", base, "--flow-id", flowId, "--code-file", "code", "--token-out", file,
            ])
            return file
        }

        func exists(_ path: String) -> Bool {
            FileManager.default.fileExists(atPath: dir.appendingPathComponent(path).path)
        }

        func bytes(_ path: String) throws -> Data { try Data(contentsOf: dir.appendingPathComponent(path)) }

        /// Runs `story` against a fresh world, stopping its server and removing its files whatever happens.
        static func with(_ database: Database, _ story: (World) throws -> Void) async throws {
            let world = try await World(database: database)
            defer { try? FileManager.default.removeItem(at: world.dir) }
            do {
                try story(world)
            } catch {
                await world.server.stop()
                throw error
            }
            await world.server.stop()
        }
    }

    @Test(
        "create, address, sign, back up, lose, recover, sign under the same address; add a device, sign, remove it; eject",
        .timeLimit(.minutes(5)), arguments: Database.allCases)
    func lifecycle(database: Database) async throws {
        try await World.with(database, story)
    }

    private func story(_ world: World) throws {
        let python = IndependentECDSAVerifier.python()
        if python == nil {
            Issue.record(Comment(rawValue: IndependentECDSAVerifier.skipped), severity: .warning)
        }
        let server = ["--server", world.base, "--user-id", world.user]
        let sign = try world.token("sign")
        try Data("482916\n".utf8).write(to: world.dir.appendingPathComponent("passcode"))
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: world.dir.appendingPathComponent("cloud"))
        var lines: [String] = []
        var messageNumber = 0
        /// Signs a fresh message with the device named by `device` and keeps the line for the verifier.
        func signs(_ device: [String], derived: String) throws {
            messageNumber += 1
            let message = Array("transfer \(messageNumber) of the ECDSA lifecycle".utf8)
            try Data(message).write(to: world.dir.appendingPathComponent("message"))
            let signed = try world.succeed(
                ["sign"] + server + ["--token-file", sign, "--mode", "ecdsa", "--message-file", "message"] + device)
            lines.append(try IndependentECDSAVerifier.line(signed: signed, message: message, derived: derived))
        }

        // Created by DKG with the custodian; the pair setup is kept beside the share, then moves into the store.
        let created = try StrictJSON.parse(
            try world.succeed(
                ["wallet", "create"] + server + [
                    "--token-file", sign, "--curve", "secp256k1", "--wallet-id", "w-life", "--out", "device-share.json",
                ]))
        #expect(world.exists("device-share.json.pairsetup"))
        let derived = try world.succeed(["derive", "--address", "eth", "--signing-share", "device-share.json"])
        guard case .string(let address)? = try StrictJSON.parse(derived)["address"],
            case .string(let walletKey)? = created["publicKey"]
        else { throw MethodsCLITests.CLIError.noCode }
        // A copy of the share elsewhere makes its own setup, which replaces this one on the server: the
        // next signature here aborts over the kept setup, makes one fresh setup, keeps it and signs.
        try FileManager.default.copyItem(
            at: world.dir.appendingPathComponent("device-share.json"), to: world.dir.appendingPathComponent("twin.json")
        )
        let first = try world.bytes("device-share.json.pairsetup")
        try signs(["--signing-share", "twin.json"], derived: derived)
        #expect(world.exists("twin.json.pairsetup"))
        try signs(["--signing-share", "device-share.json"], derived: derived)
        #expect(try world.bytes("device-share.json.pairsetup") != first)
        _ = try world.succeed([
            "store", "init", "--store", "device", "--passcode-file", "passcode", "--confirm-file", "passcode",
            "--share",
            "device-share.json", "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ])
        #expect(!world.exists("device-share.json.pairsetup") && world.exists("device/ecdsa.pairsetup"))
        let kept = try world.bytes("device/ecdsa.pairsetup")
        let device = ["--store", "device", "--passcode-file", "passcode"]
        try signs(device, derived: derived)
        try signs(device, derived: derived)
        // Both signatures used the setup made at creation: no fresh one was made or kept.
        #expect(try world.bytes("device/ecdsa.pairsetup") == kept)

        // Backed up, then lost: the store and the share file are gone.
        _ = try world.succeed(
            ["methods", "add"] + server + [
                "--token-file", try world.token("addOrUpdateRecovery"), "--webhook-secret-file", "webhook.secret",
                "--method", "cloudKey", "--secret-file", "cloud", "--kdf-ops", "1", "--kdf-mem-kib", "8",
            ] + device)
        try FileManager.default.removeItem(at: world.dir.appendingPathComponent("device"))
        try FileManager.default.removeItem(at: world.dir.appendingPathComponent("device-share.json"))

        // A new device recovers into an empty store and makes its pair setup; it signs under the same address.
        _ = try world.succeed([
            "store", "init", "--store", "new-device", "--passcode-file", "passcode", "--confirm-file", "passcode",
            "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ])
        let newDevice = ["--store", "new-device", "--passcode-file", "passcode"]
        let recovered = try StrictJSON.parse(
            try world.succeed(
                ["store", "recover"] + newDevice + server + [
                    "--token-file", try world.token("recover"), "--method", "cloudKey", "--secret-file", "cloud",
                    "--sign-token-file", sign,
                ]))
        #expect(recovered["publicKey"] == .string(walletKey) && recovered["generation"] == .number("1"))
        #expect(world.exists("new-device/ecdsa.pairsetup"))
        let recoveredSetup = try world.bytes("new-device/ecdsa.pairsetup")
        try signs(newDevice, derived: derived)
        #expect(try world.bytes("new-device/ecdsa.pairsetup") == recoveredSetup)

        // A second device joins (making its own pair setup), signs, and is removed: then refused.
        guard
            case .string(let deviceKey)? = try StrictJSON.parse(
                try world.succeed(["device", "add", "request", "--key-file", "phone.key"]))["deviceKey"]
        else { throw MethodsCLITests.CLIError.noCode }
        let add = try world.token("addDevice")
        _ = try world.succeed(
            ["device", "add", "approve"] + server + [
                "--token-file", add, "--device-id", "phone", "--device-key", deviceKey,
            ] + newDevice)
        _ = try world.succeed([
            "device", "add", "join", "--server", world.base, "--token-file", add, "--device-id", "phone", "--key-file",
            "phone.key", "--out", "phone.json", "--public-key", walletKey, "--user-id", world.user, "--sign-token-file",
            sign,
        ])
        #expect(world.exists("phone.json.pairsetup"))
        let phone = ["--signing-share", "phone.json"]
        try signs(phone, derived: derived)
        _ = try world.succeed([
            "device", "remove", "--server", world.base, "--token-file", try world.token("removeDevice"), "--device-id",
            "phone",
        ])
        let refused = try world.run(
            ["sign"] + server + ["--token-file", sign, "--mode", "ecdsa", "--message-file", "message"] + phone)
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stderr)")
        // The primary device still signs.
        try signs(newDevice, derived: derived)

        // Ejected: the key's Ethereum address, by eth-account, is the wallet's.
        _ = try world.succeed(
            ["eject"] + server + ["--token-file", try world.token("eject"), "--out", "wallet-key.json"] + newDevice)
        let ejected = try StrictJSON.parse(Array(try world.bytes("wallet-key.json")))
        guard case .string(let hex)? = ejected["privateKeyHex"] else { throw MethodsCLITests.CLIError.noCode }
        #expect(ExportedKeyCheck.publicKey(ofHex: hex, curve: .secp256k1) == Hex.decode(walletKey))

        guard let python else { return }
        #expect(lines.count == 7)
        let verified = try IndependentECDSAVerifier.verify(lines: lines, python: python, directory: world.dir.path)
        #expect(verified.status == 0 && verified.output.contains("7 of 7"), "\(verified.output)")
        #expect(try IndependentECDSAVerifier.ethAccountAddress(privateKeyHex: hex, python: python) == address)
    }
}
