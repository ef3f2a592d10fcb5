#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery

/// Kills `share-store-harness recover` at random moments of a whole recovery (reading, decrypting,
/// the custodian session, verifying, storing) and checks that the device store is exactly the old
/// generation or exactly the recovered one, and that the passcode still works.
@Suite("Recovery crash safety", .serialized)
struct RecoveryCrashTests {
    typealias Support = StoreTestSupport
    /// 200 everywhere: fewer would not reliably land kills inside the session and the storing, which
    /// the test asserts.
    static let trials = 200
    static let clientId = "share-store-harness client"
    static let password = "crash-test backup password"

    /// A backup of a fresh 2-of-2 wallet, written as the harness's fixture; returns the old signing share.
    static func writeFixture(in fixture: String) async throws -> ShareRecord {
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "recovery-crash")
        let key = SealingKeyPair()
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: key, shareSource: integrator)
        await custodian.register(signingShares: [signing[1]], clientId: clientId)
        // Argon2id large enough that decrypting is a window of its own, small enough for 200 runs.
        let engine = RecoveryEngine(
            configuration: .init(
                userId: clientId, custodian: custodian, shareStore: InMemorySigningShareStore(current: signing[0]),
                cipherTextStore: integrator, custodianBackupSink: integrator,
                argon2: try Argon2idParameters(opslimit: 1, memlimitKiB: 8_192)))
        let cipherText = try await engine.backup(method: .password, secret: .text(password))
        let shares = await integrator.fetchBackupShares(clientId: clientId)
        try FileManager.default.createDirectory(atPath: fixture, withIntermediateDirectories: true)
        let files: [(String, String)] = [
            ("cipherText", cipherText.base64), ("secret", password),
            ("custodian.key", Hex.encode(key.secretKey.revealedBytes())),
            ("custodian-shares.json", JSONWriter.write(.array(shares.map(JSONValue.string)))),
        ]
        for (name, text) in files {
            #expect(
                FileManager.default.createFile(
                    atPath: "\(fixture)/\(name)", contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        }
        return signing[0]
    }

    /// A device store holding the old signing share (generation 0).
    static func resetStore(_ directory: String, with share: ShareRecord) async throws {
        try? FileManager.default.removeItem(atPath: directory)
        let store = try await Support.open(directory, argon2: .minimum)
        let passcode = Support.passcode(StoreCrashTests.passcodeText)
        try await store.createPasscode(passcode, confirmation: passcode)
        try await store.stage(share)
        try await store.promoteStaged()
    }

    @Test(.timeLimit(.minutes(3)))
    func killedDuringRecoveryShowsOldOrNewGeneration() async throws {
        let harness = try HarnessProcess.executablePath()
        let root = Support.makeDirectory("recovery-crash")
        defer { Support.removeDirectory(root) }
        let directory = "\(root)/device", fixture = "\(root)/fixture"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let passcodeFile = try StoreCrashTests.writePasscodeFile(in: directory)
        let passcode = Support.passcode(StoreCrashTests.passcodeText)
        let old = try await Self.writeFixture(in: fixture)
        let arguments = ["recover", "--store", directory, "--passcode-file", passcodeFile, "--fixture", fixture]

        // One run to the end: when each line arrives after `ready`, so kills can aim at every step.
        try await Self.resetStore(directory, with: old)
        var milestones: [(line: String, at: Duration)] = []
        do {
            let process = try HarnessProcess.launch(harness, arguments)
            let start = ContinuousClock.now
            while let line = process.readLine(timeout: .seconds(30)) {
                milestones.append((line, start.duration(to: .now)))
            }
            #expect(process.wait() == .exited(0))
        }
        let expected = ["ready 0"] + RecoveryStatus.sequence.map { "status \($0)" } + ["recovered 1"]
        try #require(milestones.map(\.line) == expected, "the uninterrupted run printed \(milestones.map(\.line))")
        // Windows between consecutive lines (from `ready`), and one as long as the run after the last.
        let offsets = milestones.map(\.at).map { $0 - milestones[0].at }
        let windows = (0..<offsets.count).map { index in
            (offsets[index], index + 1 < offsets.count ? offsets[index + 1] : offsets[index] * 2)
        }

        var ended = (old: 0, new: 0), stagedLeft = 0
        var killedAfter: [String: Int] = [:]
        for trial in 0..<Self.trials {
            try await Self.resetStore(directory, with: old)
            let process = try HarnessProcess.launch(harness, arguments)
            guard process.readLine(timeout: .seconds(20)) == "ready 0" else {
                process.kill()
                Issue.record("trial \(trial): no ready line (\(process.readRemainingLines()))")
                break
            }
            // Aim at one window, chosen uniformly, and at a uniform moment inside it.
            let (from, to) = windows[trial % windows.count]
            let span = max(Int64((to - from) / .microseconds(1)), 1)
            usleep(UInt32(clamping: Int64((from / .microseconds(1))) + Int64.random(in: 0..<span)))
            process.kill()
            let lines = process.readRemainingLines()
            let last = lines.last(where: { !$0.hasSuffix("⟂") }) ?? "ready 0"
            killedAfter[last, default: 0] += 1

            // A fresh object, as after a reboot.
            let store = try await Support.open(directory, argon2: .minimum)
            try await store.authenticate(passcode)
            #expect(await store.failedAttempts == 0)
            let current = try #require(try await store.currentShare(), "trial \(trial): no current generation")
            #expect(current.publicKey == old.publicKey && current.partyIndex == 1 && current.kind == .signing)
            if current.generation == 0 {
                ended.old += 1
                #expect(
                    current.setId == old.setId && current.secret == old.secret,
                    "trial \(trial): a changed old generation")
                // Nothing is stored before `storingShare` begins.
                let storing = lines.contains("status storingShare")
                let staged = try await store.stagedShare()
                #expect(storing || staged == nil, "trial \(trial): staged before storingShare")
                #expect(!lines.contains("recovered 1"), "trial \(trial): recovered, yet the old generation is current")
            } else {
                ended.new += 1
                #expect(
                    current.generation == 1 && current.setId != old.setId,
                    "trial \(trial): generation \(current.generation)")
                #expect(lines.contains("status storingShare"), "trial \(trial): new generation before storingShare")
                // currentShare() ran every §4 check, x_1·G = X_1 included; the set must be the recovered one.
                #expect(try Point(generatorTimes: try #require(current.secret)) == current.publicShare)
            }
            if let staged = try await store.stagedShare() {
                stagedLeft += 1
                #expect(
                    staged.generation == 1 && current.generation == 0, "trial \(trial): staged \(staged.generation)")
            }
            #expect(Support.names(in: directory).allSatisfy { !$0.hasPrefix(".tmp.") })
        }
        var seen = Set<String>()
        let histogram = expected.filter { seen.insert($0).inserted }.map { "\($0): \(killedAfter[$0] ?? 0)" }
            .joined(separator: ", ")
        print(
            "RecoveryCrashTests: \(Self.trials) trials; old generation current in \(ended.old), recovered one in "
                + "\(ended.new); staged file left in \(stagedLeft); last line before the kill: \(histogram)")
        #expect(ended.old + ended.new == Self.trials)
        // The kills must have landed in the custodian session and in storing, not only around them.
        let inSession =
            (killedAfter["status recoveringSigningShare"] ?? 0) + (killedAfter["status generatingShare"] ?? 0)
        #expect(inSession > 0 && (killedAfter["status storingShare"] ?? 0) > 0, "\(histogram)")
    }
}
