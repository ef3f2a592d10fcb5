import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// A recovery or backup cut off at each step ends, at the next start, with the device and the
/// custodian on the same generation, and the wallet able to recover again. A cut is simulated by
/// a custodian whose network fails from a chosen step on (requests, and the question afterwards):
/// what the engine leaves then is what a killed process leaves, since it clears nothing it has not
/// settled. (The killed-process run over HTTP is `ShareRecoveryServerTests`' concern.)
@Suite("Resume after a cut-off operation")
struct ResumeTests {
    struct Cut: Error {}

    /// Where the network goes down.
    enum Step: String, CaseIterable, CustomTestStringConvertible {
        /// The open never reaches the custodian (the id is on record already).
        case open
        /// Before the custodian hears of the client's dealing.
        case finish
        /// The confirm never reaches the custodian.
        case confirmLost
        /// The confirm lands, its answer is lost.
        case answerLost

        var testDescription: String { rawValue }
    }

    /// LocalCustodian behind a network that fails from `step` on, until `restore()`.
    actor FlakyCustodian: Custodian {
        let inner: LocalCustodian
        let step: Step
        private(set) var down = false

        init(_ inner: LocalCustodian, failingAt step: Step) {
            self.inner = inner
            self.step = step
        }

        func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
            if step == .open { down = true }
            guard !down else { throw Cut() }
            return try await inner.openSession(request)
        }

        func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
            if step == .finish { down = true }
            guard !down else { throw Cut() }
            return try await inner.finishSession(id: id, clientDealing: clientDealing)
        }

        func confirmSession(id: String) async throws {
            if step == .confirmLost { down = true }
            guard !down else { throw Cut() }
            try await inner.confirmSession(id: id)
            if step == .answerLost {
                down = true
                throw Cut()
            }
        }

        func abortSession(id: String) async {
            guard !down else { return }
            await inner.abortSession(id: id)
        }

        func settleSession(_ session: PendingSession) async throws -> SessionSettlement {
            guard !down else { throw Cut() }
            return await inner.settleSession(session)
        }
    }

    @Test(
        "a recovery cut off at each step: the next start settles it, device and custodian agree",
        arguments: Step.allCases)
    func recovery(step: Step) async throws {
        let world = try await RecoveryEngineTests.World(seed: "resume \(step)")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let oldSet = world.signing[0].setId
        let (plain, store) = world.newDevice()
        var configuration = plain.configuration
        configuration.custodian = FlakyCustodian(world.custodian, failingAt: step)
        await #expect(throws: Cut.self) {
            try await RecoveryEngine(configuration: configuration).recover(method: .password, secret: .text("pw"))
        }
        // What a cut leaves: the session on record; a share staged once the custodian finished.
        #expect(await store.pendingSession()?.purpose == .recovery)
        #expect((await store.stagedShare() != nil) == (step == .confirmLost || step == .answerLost))
        #expect(await store.currentShare() == nil)
        let status = try await plain.deviceStatus()
        #expect(status.pendingSession == (await store.pendingSession()) && status.current == nil)
        #expect(status.staged == (await store.stagedShare())?.publicDescription)
        #expect(status.activeMethods == [.password] && status.isRecoveryActivated == true)

        // The next start, with the network back.
        let outcome = try await plain.resumeInterruptedOperation()
        let custodianSet = try #require(await world.custodian.currentSigningShares(clientId: "user-1").first?.setId)
        switch step {
        case .open, .finish, .confirmLost:
            #expect(outcome == .rolledBack(.recovery))
            #expect(await store.currentShare() == nil && custodianSet == oldSet)
        case .answerLost:
            #expect(outcome == .completed(.recovery))
            #expect(try #require(await store.currentShare()).setId == custodianSet)
            #expect(custodianSet != oldSet)
        }
        #expect(await store.stagedShare() == nil)
        #expect(await store.pendingSession() == nil)
        #expect(try await plain.resumeInterruptedOperation() == .nothingToResume)

        // And the wallet recovers again, from the same backup.
        let again = try await plain.recover(method: .password, secret: .text("pw"))
        #expect(again.publicKey == world.signing[0].publicKey)
        #expect(await world.custodian.currentSigningShares(clientId: "user-1").first?.setId == again.setId)
    }

    @Test("a lost confirm answer with the custodian still reachable completes in the same run")
    func answerLostButAskable() async throws {
        let world = try await RecoveryEngineTests.World(seed: "resume in run")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let (plain, store) = world.newDevice()
        var configuration = plain.configuration
        configuration.custodian = AnswerDropping(inner: world.custodian)
        let recovered = try await RecoveryEngine(configuration: configuration).recover(
            method: .password, secret: .text("pw"))
        #expect(await store.currentShare() == recovered)
        #expect(await world.custodian.currentSigningShares(clientId: "user-1").first?.setId == recovered.setId)
        #expect(await store.pendingSession() == nil)
    }

    /// Confirms, then loses the answer; everything else reaches the custodian.
    struct AnswerDropping: Custodian {
        let inner: LocalCustodian
        func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
            try await inner.openSession(request)
        }
        func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
            try await inner.finishSession(id: id, clientDealing: clientDealing)
        }
        func confirmSession(id: String) async throws {
            try await inner.confirmSession(id: id)
            throw Cut()
        }
        func abortSession(id: String) async { await inner.abortSession(id: id) }
        func settleSession(_ session: PendingSession) async throws -> SessionSettlement {
            await inner.settleSession(session)
        }
    }

    @Test("a backup cut off is settled first by the next operation", arguments: Step.allCases)
    func backup(step: Step) async throws {
        let world = try await RecoveryEngineTests.World(seed: "resume backup \(step)")
        var configuration = world.engine.configuration
        configuration.custodian = FlakyCustodian(world.custodian, failingAt: step)
        await #expect(throws: Cut.self) {
            try await RecoveryEngine(configuration: configuration).backup(method: .password, secret: .text("pw"))
        }
        #expect(await world.device.pendingSession()?.purpose == .backup)
        // The next operation settles it first, then runs.
        try await world.engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        #expect(await world.device.pendingSession() == nil)
        #expect(await world.device.currentShare() == world.signing[0], "a backup never changes the signing share")
    }
}
