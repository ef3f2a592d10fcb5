import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// The recovery-method lifecycle through the binary, against `share-recovery serve` on SQLite.
@Suite("share-recovery methods / otp / custodian register")
struct MethodsCLITests {
    /// A server child process on a free loopback port, stopped when the test ends.
    final class ServerProcess {
        let process = Process()
        let base: String

        init(
            directory: URL,
            arguments: [String] = ["serve", "--port", "0", "--database", "server.sqlite", "--otp-file", "otp.jsonl"],
            drainSeconds: Int = 0
        ) throws {
            process.executableURL = CLIRunner.productsDirectory.appendingPathComponent("share-recovery")
            // No drain unless a test asks for one: every test's teardown stops its server with SIGTERM.
            process.arguments = arguments + ["--drain-seconds", String(drainSeconds)]
            process.currentDirectoryURL = directory
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            // The first stdout line announces the bound port.
            var line: [UInt8] = []
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line += chunk
            }
            let value = try StrictJSON.parse(Array(line.prefix { $0 != UInt8(ascii: "\n") }))
            guard case .string(let url)? = value["listening"]
            else { throw CLIError.noAnnouncement }
            base = url
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }
    }

    enum CLIError: Error { case noAnnouncement, noCode }

    let dir: URL
    let server: ServerProcess

    init() throws {
        dir = try CLIRunner.temporaryDirectory()
        server = try ServerProcess(directory: dir)
    }

    func run(_ arguments: [String]) throws -> CLIRun {
        try CLIRunner.run("share-recovery", arguments, in: dir)
    }

    /// An OTP flow through `otp start` and `otp verify`, reading the code from the server's file sender.
    func token(_ purpose: String, user: String = "alice") throws -> String {
        let started = try run(["otp", "start", "--server", server.base, "--identifier", user, "--purpose", purpose])
        #expect(started.status == 0, "\(started.stderr)")
        guard
            case .string(let flowId)? = try StrictJSON.parse(started.stdout.trimmingCharacters(in: .newlines))["flowId"]
        else { throw CLIError.noCode }
        let lines = try String(contentsOf: dir.appendingPathComponent("otp.jsonl"), encoding: .utf8).split(
            separator: "\n")
        guard
            let code = lines.compactMap({ line -> String? in
                guard let entry = try? StrictJSON.parse(String(line)),
                    case .string(flowId)? = entry["flowId"],
                    case .string(let code)? = entry["code"]
                else { return nil }
                return code
            }).last
        else { throw CLIError.noCode }
        try Data(code.utf8).write(to: dir.appendingPathComponent("code"))
        let file = "token-\(purpose)"
        let verified = try run([
            "otp", "verify", "--server", server.base, "--flow-id", flowId, "--code-file", "code", "--token-out", file,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(
            !verified.stdout.contains(
                try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8).trimmingCharacters(
                    in: .newlines)))
        return file
    }

    /// Lists with one `recover` token (read tokens are reusable until they expire; the server allows
    /// five new flows per identifier per 15 minutes, so the test spends exactly five).
    func list(token: String) throws -> [String] {
        let listed = try run(["methods", "list", "--server", server.base, "--user-id", "alice", "--token-file", token])
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let names) = try StrictJSON.parse(listed.stdout.trimmingCharacters(in: .newlines)) else {
            return []
        }
        return names.compactMap { if case .string(let name) = $0 { name } else { nil } }.sorted()
    }

    func add(_ method: String, secret: String) throws -> CLIRun {
        try run([
            "methods", "add", "--server", server.base, "--user-id", "alice", "--token-file",
            try token("addOrUpdateRecovery"),
            "--webhook-secret-file", "server.sqlite.webhook-secret", "--store", "device", "--passcode-file", "passcode",
            "--method", method, "--secret-file", secret, "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ])
    }

    func delete(_ method: String, token: String, force: Bool = false) throws -> CLIRun {
        try run(
            [
                "methods", "delete", "--server", server.base, "--user-id", "alice", "--token-file", token,
                "--webhook-secret-file", "server.sqlite.webhook-secret", "--method", method,
            ] + (force ? ["--force"] : []))
    }

    /// A wallet whose custodian share is registered with the server and whose device share is in a store.
    func setUpWallet(curve: String) throws {
        #expect(try run(["keygen", "--curve", curve, "--wallet-id", "w-methods", "--out", "keys"]).status == 0)
        let registered = try run([
            "custodian", "register", "--server", server.base, "--client-id", "alice", "--share", "keys/share-2.json",
            "--webhook-secret-file", "server.sqlite.webhook-secret",
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        try Data("482916\n".utf8).write(to: dir.appendingPathComponent("passcode"))
        let initialised = try run([
            "store", "init", "--store", "device", "--passcode-file", "passcode", "--confirm-file", "passcode",
            "--share",
            "keys/share-1.json", "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ])
        #expect(initialised.status == 0, "\(initialised.stderr)")
    }

    @Test(arguments: ["secp256k1", "ed25519"])
    func listAddAndDeleteRecoveryMethods(curve: String) throws {
        try setUpWallet(curve: curve)
        try Data("correct horse".utf8).write(to: dir.appendingPathComponent("password"))
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: dir.appendingPathComponent("cloud-key"))
        let reader = try token("recover")
        #expect(try list(token: reader) == [])

        let password = try add("password", secret: "password")
        #expect(password.status == 0, "\(password.stderr)")
        #expect(password.stdout.contains(#""method":"password""#))
        #expect(try add("cloudKey", secret: "cloud-key").status == 0)
        #expect(try list(token: reader) == ["cloudKey", "password"])

        // A token of the wrong purpose is refused by the server, and nothing is deleted.
        let wrongPurpose = try delete("cloudKey", token: reader)
        #expect(wrongPurpose.status == 1 && wrongPurpose.stderr.hasPrefix("error: "), "\(wrongPurpose.stderr)")
        #expect(try list(token: reader) == ["cloudKey", "password"])

        #expect(try delete("cloudKey", token: try token("deleteRecovery")).status == 0)
        // The last method stays unless forced; the refusal comes before the token is spent.
        let deleter = try token("deleteRecovery")
        let last = try delete("password", token: deleter)
        #expect(last.status == 1 && last.stderr.contains("invalidParameters"), "\(last.stderr)")
        #expect(try list(token: reader) == ["password"])
        #expect(try delete("password", token: deleter, force: true).status == 0)
        #expect(try list(token: reader) == [])
        let missing = try delete("password", token: deleter, force: true)
        #expect(missing.status == 1 && missing.stderr.contains("notFound"), "\(missing.stderr)")
    }

    /// `kit create` puts a kit in the recoveryCode slot; `kit status` tells it from a typed code;
    /// `methods delete --method recoveryCode` deletes it.
    @Test("a rate-limited otp start says how long to wait: the server's Retry-After")
    func rateLimitedSaysHowLong() throws {
        // The server allows five new flows per identifier per window; the sixth is refused.
        let start = ["otp", "start", "--server", server.base, "--identifier", "hasty", "--purpose", "recover"]
        var last = try run(start)
        for _ in 0..<5 where last.status == 0 { last = try run(start) }
        #expect(last.status == 1 && last.stderr.contains("error: rateLimited"), "\(last.stderr)")
        let wait = try #require(
            last.stderr.firstMatch(of: /hint: too many attempts .* wait (\d+) seconds/), "\(last.stderr)")
        #expect((1...900).contains(Int(wait.output.1) ?? 0))
    }

    @Test func aKitIsARecoveryMethod() throws {
        try setUpWallet(curve: "ed25519")
        try Data("correct horse".utf8).write(to: dir.appendingPathComponent("password"))
        let reader = try token("recover")
        #expect(try add("password", secret: "password").status == 0)
        let status = { () throws -> String in
            let run = try self.run([
                "kit", "status", "--server", self.server.base, "--user-id", "alice", "--token-file", reader,
            ])
            #expect(run.status == 0, "\(run.stderr)")
            return run.stdout.trimmingCharacters(in: .newlines)
        }
        #expect(try status() == #"{"recoveryKit":false}"#)

        let create = [
            "kit", "create", "--server", server.base, "--user-id", "alice", "--token-file",
            try token("addOrUpdateRecovery"),
            "--webhook-secret-file", "server.sqlite.webhook-secret", "--store", "device", "--passcode-file", "passcode",
            "--groups", "2of3", "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ]
        let refused = try run(create)
        #expect(refused.status != 0 && refused.stdout.isEmpty, "mnemonics need --reveal-secret")
        let created = try run(create + ["--reveal-secret"])
        #expect(created.status == 0, "\(created.stderr)")
        let mnemonics = created.stdout.split(separator: "\n")
        #expect(mnemonics.count == 3 && mnemonics.allSatisfy { $0.split(separator: " ").count == 33 })
        #expect(try list(token: reader) == ["password", "recoveryCode"])
        #expect(try status() == #"{"recoveryKit":true}"#)

        // Any two of the three mnemonics give the master secret another SLIP-39 tool would print.
        try Data((mnemonics[0] + "\n" + mnemonics[2] + "\n").utf8).write(to: dir.appendingPathComponent("two"))
        let combined = try run(["kit", "combine", "--mnemonics-file", "two", "--reveal-secret"])
        #expect(
            combined.status == 0 && combined.stdout.trimmingCharacters(in: .newlines).count == 64, "\(combined.stderr)")

        #expect(try delete("recoveryCode", token: try token("deleteRecovery")).status == 0)
        #expect(try list(token: reader) == ["password"])
        #expect(try status() == #"{"recoveryKit":false}"#)
    }
}
