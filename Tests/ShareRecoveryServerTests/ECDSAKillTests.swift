#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The device killed mid-session (issue 37, item 4): the built `share-recovery` binary signs with
/// `sign --server --mode ecdsa` against this test's server through a proxy that holds the answer to
/// one request after the server applied it, and is killed with SIGKILL right then. Nothing is
/// half-kept: the device's share file and kept pair setup are as before (or, cut in a pair setup,
/// the setup the server kept is replaced by the next run's), the server keeps the same share and
/// setup, the account is not stuck (at once after a finished step, or once the session expires, as
/// docs/server.md "What clients can rely on" says), the next run signs over the kept setup, and the
/// audit trail verifies.
@Suite("ECDSA signing: the device killed between rounds")
struct ECDSAKillTests {
    /// The request whose answer is held when the device is killed.
    enum KillPoint: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The pair setup's second request: the server keeps the setup, the device never learns it.
        case pairSetupFinish
        /// The signature's opening: the session is open with the custodian's round state.
        case opening
        /// Round 2: the session has moved on to round 3's state.
        case round2
        /// Round 3: the server signed and ended the session; the device never got the signature.
        case round3

        var testDescription: String { rawValue }

        func holds(_ requestLine: String) -> Bool {
            switch self {
            case .pairSetupFinish:
                requestLine.hasPrefix("POST /wallets/ecdsa/pair-setups/") && requestLine.contains("/finish ")
            case .opening: requestLine.hasPrefix("POST /wallets/ecdsa/signing-sessions ")
            case .round2:
                requestLine.hasPrefix("POST /wallets/ecdsa/signing-sessions/") && requestLine.contains("/round2 ")
            case .round3:
                requestLine.hasPrefix("POST /wallets/ecdsa/signing-sessions/") && requestLine.contains("/round3 ")
            }
        }

        /// Whether the session the kill left holds the account until it expires.
        var leavesSessionRunning: Bool { self == .opening || self == .round2 }
    }

    /// A finished run of the binary.
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The binary, built beside this test runner by `swift build --build-tests`.
    static var binary: URL {
        let runner =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: runner).deletingLastPathComponent().appendingPathComponent("share-recovery")
    }

    /// Starts the binary in `directory`, its output into files there.
    static func start(_ arguments: [String], in directory: URL) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        for name in ["stdout", "stderr"] {
            _ = FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil)
        }
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits for the process without holding a thread of the pool the in-process servers answer on.
    static func finish(_ process: Process, in directory: URL) async throws -> Run {
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        func read(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return Run(status: process.terminationStatus, stdout: try read("stdout"), stderr: try read("stderr"))
    }

    static func run(_ arguments: [String], in directory: URL) async throws -> Run {
        try await finish(try start(arguments, in: directory), in: directory)
    }

    /// What the server keeps for the account: its share row and the pair setup of the set.
    static func kept(_ world: TestWorld, user: String) async throws -> [String] {
        let storage = try world.inspector()
        do {
            let rows = try await storage.read { transaction in
                try await transaction.query(
                    "SELECT set_id, generation, sealed_record FROM signing_shares WHERE client_id = ?", [.text(user)])
                    + (try await transaction.query(
                        "SELECT set_id, generation, sealed_setup, created_at FROM ecdsa_pair_setups WHERE client_id = ?",
                        [.text(user)]))
            }
            await storage.close()
            return rows.map { row in
                row.columns.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
        } catch {
            await storage.close()
            throw error
        }
    }

    @Test(
        "sign --server --mode ecdsa killed with SIGKILL after the server applied a round: nothing half-kept, the next run signs",
        .timeLimit(.minutes(10)), arguments: TestBackend.allCases, KillPoint.allCases)
    func killedBetweenRounds(backend: TestBackend, point: KillPoint) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path),
            "\(Self.binary.path) is missing: build with `swift build --build-tests` first")
        var lifetime = 0
        try await TestWorld.with(
            backend,
            configure: {
                WalletSessionTests.unlimitedFlows(&$0)
                lifetime = $0.sessionLifetimeSeconds
            }
        ) { world in
            let directory = URL(fileURLWithPath: TestWorld.makeDirectory())
            defer { try? FileManager.default.removeItem(at: directory) }
            let user = "ecdsa-killed"
            func writeToken() async throws {
                try Data(try await world.token(for: user, purpose: "sign").utf8).write(
                    to: directory.appendingPathComponent("sign.token"))
            }
            try await writeToken()
            let base = world.servers[0].baseURL()
            let created = try await Self.run(
                [
                    "wallet", "create", "--server", base, "--user-id", user, "--token-file", "sign.token", "--curve",
                    "secp256k1", "--wallet-id", "w", "--out", "device-share.json",
                ], in: directory)
            try #require(created.status == 0, "\(created.stderr)")
            let shareFile = directory.appendingPathComponent("device-share.json")
            let setupFile = directory.appendingPathComponent("device-share.json.pairsetup")
            let payload = Array("a transaction's signing payload".utf8)
            try Data(payload).write(to: directory.appendingPathComponent("payload.bin"))
            if point == .pairSetupFinish {
                // A device with no setup kept makes one before it signs: the kill comes in that setup.
                try FileManager.default.removeItem(at: setupFile)
            }
            let share = try Data(contentsOf: shareFile)
            let setup = try? Data(contentsOf: setupFile)
            let serverBefore = try await Self.kept(world, user: user)
            func sign(through server: String) -> [String] {
                [
                    "sign", "--server", server, "--user-id", user, "--token-file", "sign.token", "--signing-share",
                    "device-share.json", "--mode", "ecdsa", "--message-file", "payload.bin",
                ]
            }

            // The run, killed once the server has answered the chosen request.
            let proxy = try FaultProxy(
                upstreamPort: world.servers[0].port, seed: 0,
                rates: .init(reset: 0, dropAnswer: 0, delayRequest: 0, delayAnswer: 0),
                holdingAnswers: { point.holds($0) })
            defer { proxy.stop() }
            let process = try Self.start(sign(through: "http://127.0.0.1:\(proxy.port)"), in: directory)
            let deadline = Date().addingTimeInterval(120)
            while proxy.heldAnswers == 0, process.isRunning, Date() < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let held = proxy.heldAnswers > 0
            kill(process.processIdentifier, SIGKILL)
            let killed = try await Self.finish(process, in: directory)
            try #require(held, "the run was not held at \(point): \(killed.stderr)")
            #expect(process.terminationReason == .uncaughtSignal && killed.status == SIGKILL)

            // Nothing half-kept on the device or the server.
            #expect(try Data(contentsOf: shareFile) == share)
            #expect((try? Data(contentsOf: setupFile)) == setup, "the kept pair setup changed")
            let sessions = try await ECDSAWire.signingSessions(world: world, userId: user)
            let setupsMade = try await world.auditRows().filter {
                $0.account == user && $0.event == "ecdsaPairSetupMade"
            }
            var signed = try await ECDSAWire.auditedSessions(world: world, event: "ecdsaSigned", userId: user)
            switch point {
            case .pairSetupFinish:
                // The server kept the setup it finished (replacing none); the device has none and will make one.
                #expect(sessions.isEmpty && setupsMade.count == 2 && signed.isEmpty)
                #expect(try await ECDSAWire.keptSetups(world: world, userId: user).count == 1)
            case .opening, .round2:
                let state = point == .opening ? "open" : "finished"
                #expect(sessions.count == 1 && sessions.first?.state == state, "\(sessions)")
                #expect(signed.isEmpty && setupsMade.count == 1)
                #expect(try await Self.kept(world, user: user) == serverBefore)
            case .round3:
                #expect(sessions.count == 1 && sessions.first?.state == "done" && sessions.first?.sealedStateCount == 0)
                #expect(signed == sessions.map(\.id) && setupsMade.count == 1)
                #expect(try await Self.kept(world, user: user) == serverBefore)
            }

            if point.leavesSessionRunning {
                // The session the device left holds the account, and says for how long.
                let refused = try await Self.run(sign(through: base), in: directory)
                #expect(refused.status != 0 && refused.stderr.contains("operationInProgress"), "\(refused.stderr)")
                #expect((try? Data(contentsOf: setupFile)) == setup, "a refused run changed the kept setup")
                world.clock.advance(seconds: Int64(lifetime) + 1)
                try await writeToken()
            }
            let again = try await Self.run(sign(through: base), in: directory)
            #expect(again.status == 0, "\(point): \(again.stderr)")
            let printed = try StrictJSON.parse(Array(again.stdout.utf8))
            let device = try ShareRecord(json: String(decoding: share, as: UTF8.self))
            if case .string(let compact)? = printed["signature"], let bytes = Hex.decode(compact),
                case .number(let recovery)? = printed["recoveryId"], let recoveryId = UInt8(recovery)
            {
                let signature = try ECDSASignature(compact: bytes, recoveryId: recoveryId)
                #expect(signature.isValid(digest: Keccak256.hash(payload), publicKey: device.publicKey))
            } else {
                Issue.record("no signature in \(again.stdout)")
            }
            // It signed over the setup the device kept: no setup was made, none changed hands.
            let madeAfter = try await world.auditRows().filter {
                $0.account == user && $0.event == "ecdsaPairSetupMade"
            }
            #expect(madeAfter.count == setupsMade.count + (point == .pairSetupFinish ? 1 : 0))
            if point == .pairSetupFinish {
                #expect(FileManager.default.fileExists(atPath: setupFile.path))
            } else {
                #expect(try Data(contentsOf: setupFile) == setup)
                #expect(try await Self.kept(world, user: user) == serverBefore)
            }
            // One more session, signed once; the killed one never signs; nothing aborted.
            signed = try await ECDSAWire.auditedSessions(world: world, event: "ecdsaSigned", userId: user)
            let after = try await ECDSAWire.signingSessions(world: world, userId: user)
            let new = after.filter { session in !sessions.contains { $0.id == session.id } }
            #expect(new.count == 1 && new.first?.state == "done" && Set(signed).count == signed.count, "\(after)")
            #expect(sessions.allSatisfy { !signed.contains($0.id) } || point == .round3, "the killed session signed")
            #expect(signed.count == (point == .round3 ? 2 : 1), "\(signed)")
            #expect(try await ECDSAWire.auditedSessions(world: world, event: "ecdsaAborted", userId: user).isEmpty)
            let storage = try world.inspector()
            let verified = try await AuditTrail.verify(storage)
            await storage.close()
            #expect(verified.count == Int64(try await world.auditRows().count))
        }
    }
}
