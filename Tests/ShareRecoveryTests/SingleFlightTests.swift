#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// At most one recovery, backup or method change per wallet at a time: in one process (the engine),
/// across processes (the store's lock, which a killed holder cannot leave behind). The account-wide
/// rule at the custodian is tested with the server (RecoverySessionTests).
@Suite("Single flight per wallet")
struct SingleFlightTests {
    /// Lets a test hold a recovery inside its cipherText fetch.
    final class Gate: Sendable {
        let entered: AsyncStream<Void>
        let enter: AsyncStream<Void>.Continuation
        let released: AsyncStream<Void>
        let release: AsyncStream<Void>.Continuation

        init() {
            (entered, enter) = AsyncStream<Void>.makeStream()
            (released, release) = AsyncStream<Void>.makeStream()
        }
    }

    /// The integrator's cipherTexts, each fetch held until the gate opens.
    struct HeldSource: CipherTextSource {
        let inner: InMemoryIntegrator
        let gate: Gate

        func fetchCipherText(userId: String, method: BackupMethod) async throws -> String {
            gate.enter.yield()
            for await _ in gate.released { break }
            return try await inner.fetchCipherText(userId: userId, method: method)
        }
    }

    @Test("a second operation on the wallet fails at once while one runs, through any engine; other wallets run")
    func oneOperationPerWalletInAProcess() async throws {
        let world = try await RecoveryEngineTests.World(seed: "single flight")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let (plain, store) = world.newDevice()
        let gate = Gate()
        var configuration = plain.configuration
        configuration.cipherTextSource = HeldSource(inner: world.integrator, gate: gate)
        let engine = RecoveryEngine(configuration: configuration)
        let first = Task { try await engine.recover(method: .password, secret: .text("pw")) }
        var entered = gate.entered.makeAsyncIterator()
        _ = await entered.next()

        let busy = ShareRecoveryError(.operationInProgress, "")
        let other = RecoveryEngine(configuration: configuration)
        let error = await #expect(throws: busy) { try await other.recover(method: .password, secret: .text("pw")) }
        #expect(error?.reason.contains("recovery") == true, "\(String(describing: error))")
        await #expect(throws: busy) {
            try await engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        }
        await #expect(throws: busy) { try await engine.deleteRecoveryMethod(.password, force: true) }
        // The old device's store is another wallet object: its backup runs meanwhile.
        try await world.engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        #expect(await store.currentShare() == nil, "the refused attempts changed nothing")

        gate.release.yield()
        let recovered = try await first.value
        #expect(recovered.generation == 1 && recovered.publicKey == world.signing[0].publicKey)
        // Done: the wallet is free again.
        try await engine.backup(method: .password, secret: .text("pw 2"))
        #expect(await store.currentShare() == recovered)
    }

    @Test("a failed operation frees the wallet", arguments: [false, true])
    func failureReleases(withCipherText: Bool) async throws {
        let world = try await RecoveryEngineTests.World(seed: "single flight failure")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let (engine, _) = world.newDevice()
        let cipherText: String? = withCipherText ? "not a cipherText" : nil
        for _ in 0..<3 {
            await #expect(throws: ShareRecoveryError.self) {
                try await engine.recover(
                    method: withCipherText ? .password : .cloudKey, cipherText: cipherText, secret: .text("pw"))
            }
        }
        let recovered = try await engine.recover(method: .password, secret: .text("pw"))
        #expect(recovered.generation == 1)
    }

    @Test(
        "another process holding the store: operationInProgress; killed, it leaves no lock behind",
        .timeLimit(.minutes(1)))
    func storeLockAcrossProcesses() async throws {
        typealias Support = StoreTestSupport
        let harness = try HarnessProcess.executablePath()
        let directory = Support.makeDirectory("single-flight")
        defer { Support.removeDirectory(directory) }
        let passcodeFile = try StoreCrashTests.writePasscodeFile(in: directory)
        let passcode = Support.passcode(StoreCrashTests.passcodeText)
        do {
            let store = try await Support.open(directory, argon2: .minimum)
            try await store.createPasscode(passcode, confirmation: passcode)
        }
        let process = try HarnessProcess.launch(
            harness, ["promote-loop", "--store", directory, "--passcode-file", passcodeFile])
        let ready = process.readLine(timeout: .seconds(20))
        guard let ready, ready.hasPrefix("ready ") else {
            process.kill()
            Issue.record("no ready line: \(String(describing: ready))")
            return
        }
        let error = #expect(throws: ShareRecoveryError(.operationInProgress, "")) {
            _ = try FileSigningShareStore(directory: directory, argon2: .minimum)
        }
        #expect(error?.reason.contains("retry") == true)
        #expect(process.kill() == .signalled(SIGKILL))
        _ = process.readRemainingLines()
        // Open again at once, and usable: the passcode works and any generation reads whole.
        let store = try FileSigningShareStore(directory: directory, argon2: .minimum)
        try await store.authenticate(passcode)
        _ = try await store.currentShare()
    }
}
