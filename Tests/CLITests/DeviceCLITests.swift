import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// `device add|list|remove` through the binary, against `share-recovery serve` on SQLite.
@Suite("share-recovery device")
struct DeviceCLITests {
    let dir: URL
    let server: MethodsCLITests.ServerProcess

    init() throws {
        dir = try CLIRunner.temporaryDirectory()
        server = try MethodsCLITests.ServerProcess(directory: dir)
    }

    func run(_ arguments: [String]) throws -> CLIRun {
        try CLIRunner.run("share-recovery", arguments, in: dir)
    }

    func json(_ run: CLIRun) throws -> JSONValue {
        try StrictJSON.parse(run.stdout.trimmingCharacters(in: .newlines))
    }

    /// A token file through `otp start` / `otp verify` (the code read from the server's file sender).
    func token(_ purpose: String) throws -> String {
        let started = try run(["otp", "start", "--server", server.base, "--identifier", "alice", "--purpose", purpose])
        #expect(started.status == 0, "\(started.stderr)")
        guard case .string(let flowId)? = try json(started)["flowId"] else { throw MethodsCLITests.CLIError.noCode }
        let lines = try String(contentsOf: dir.appendingPathComponent("otp.jsonl"), encoding: .utf8).split(
            separator: "\n")
        guard
            let code = lines.compactMap({ line -> String? in
                guard let entry = try? StrictJSON.parse(String(line)), case .string(flowId)? = entry["flowId"],
                    case .string(let code)? = entry["code"]
                else { return nil }
                return code
            }).last
        else { throw MethodsCLITests.CLIError.noCode }
        try Data(code.utf8).write(to: dir.appendingPathComponent("code"))
        let file = "token-\(purpose)"
        let verified = try run([
            "otp", "verify", "--server", server.base, "--flow-id", flowId, "--code-file", "code", "--token-out", file,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        return file
    }

    func signWith(_ share: String, token: String) throws -> CLIRun {
        try run([
            "sign", "--server", server.base, "--user-id", "alice", "--token-file", token, "--signing-share", share,
            "--message-file", "msg.bin",
        ])
    }

    @Test(
        "add a device (request, approve, join), sign from both, list, remove it: its share is refused, the other signs")
    func addSignRemove() throws {
        try Data("a device message".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        let sign = try token("sign")
        let created = try run([
            "wallet", "create", "--server", server.base, "--user-id", "alice", "--token-file", sign, "--curve",
            "secp256k1",
            "--wallet-id", "w-devices", "--out", "primary.json",
        ])
        try #require(created.status == 0, "\(created.stderr)")
        guard case .string(let publicKey)? = try json(created)["publicKey"] else {
            throw MethodsCLITests.CLIError.noCode
        }

        let requested = try run(["device", "add", "request", "--key-file", "phone.key"])
        try #require(requested.status == 0, "\(requested.stderr)")
        guard case .string(let deviceKey)? = try json(requested)["deviceKey"] else {
            throw MethodsCLITests.CLIError.noCode
        }
        let again = try run(["device", "add", "request", "--key-file", "phone.key"])
        #expect(
            again.status != 0 && again.stderr.contains("phone.key exists"), "an existing key file is never overwritten")

        let add = try token("addDevice")
        let approved = try run([
            "device", "add", "approve", "--server", server.base, "--user-id", "alice", "--token-file", add,
            "--signing-share",
            "primary.json", "--device-id", "phone", "--device-key", deviceKey,
        ])
        try #require(approved.status == 0, "\(approved.stderr)")
        #expect(try json(approved)["deviceId"] == .string("phone"))
        let joined = try run([
            "device", "add", "join", "--server", server.base, "--token-file", add, "--device-id", "phone", "--key-file",
            "phone.key",
            "--out", "phone.json", "--public-key", publicKey,
        ])
        try #require(joined.status == 0, "\(joined.stderr)")
        #expect(try json(joined)["publicKey"] == .string(publicKey))
        #expect(
            !FileManager.default.fileExists(atPath: dir.appendingPathComponent("phone.key").path),
            "the key file is deleted")
        #expect(!joined.stdout.contains("\"secret\""), "the share's secret goes to the 0600 file only")

        for share in ["primary.json", "phone.json"] {
            let signed = try signWith(share, token: sign)
            #expect(signed.status == 0, "\(share): \(signed.stderr)")
            #expect(try json(signed)["publicKey"] == .string(publicKey))
        }
        let listed = try run(["device", "list", "--server", server.base, "--token-file", sign])
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let rows)? = try json(listed)["devices"] else { throw MethodsCLITests.CLIError.noCode }
        #expect(rows.compactMap { $0["deviceId"] } == [.string("primary"), .string("phone")])

        let removed = try run([
            "device", "remove", "--server", server.base, "--token-file", try token("removeDevice"), "--device-id",
            "phone",
        ])
        #expect(removed.status == 0, "\(removed.stderr)")
        let refused = try signWith("phone.json", token: sign)
        #expect(refused.status != 0 && refused.stderr.contains("conflict"), "\(refused.stderr)")
        #expect(try signWith("primary.json", token: sign).status == 0)
    }

    @Test("help has examples; a bad device key or missing share is a usage error before any request")
    func helpAndUsage() throws {
        for path in [
            ["device"], ["device", "add"], ["device", "add", "approve"], ["device", "list"], ["device", "remove"],
        ] {
            let help = try run(path + ["--help"])
            #expect(help.status == 0 && help.stdout.contains("EXAMPLES:"), "\(path)")
        }
        let badKey = try run([
            "device", "add", "approve", "--server", server.base, "--user-id", "alice", "--token-file", "none",
            "--signing-share", "x.json",
            "--device-id", "phone", "--device-key", "zz",
        ])
        #expect(badKey.status == 2 && badKey.stderr.contains("--device-key"), "\(badKey.stderr)")
        let noShare = try run([
            "device", "add", "approve", "--server", server.base, "--user-id", "alice", "--token-file", "none",
            "--device-id", "phone",
            "--device-key", String(repeating: "ab", count: 32),
        ])
        #expect(noShare.status == 2 && noShare.stderr.contains("--signing-share"), "\(noShare.stderr)")
    }
}
