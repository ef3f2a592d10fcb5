import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// A recovery cut off against the reference server, resumed by a fresh engine (a new process knows
/// only what the device's store recorded): the server's answers to a settling `DELETE` make the
/// device and the custodian end on the same generation.
@Suite("Resume over HTTP")
struct ResumeOverHTTPTests {
    struct Cut: Error {}

    /// The HTTP custodian behind a network that drops the confirm's answer and then stays down.
    actor LosingNetwork: Custodian {
        let inner: HTTPCustodian
        let confirmLands: Bool
        private var down = false

        init(_ inner: HTTPCustodian, confirmLands: Bool) {
            self.inner = inner
            self.confirmLands = confirmLands
        }

        func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
            try await inner.openSession(request)
        }
        func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
            try await inner.finishSession(id: id, clientDealing: clientDealing)
        }
        func confirmSession(id: String) async throws {
            down = true
            if confirmLands { try await inner.confirmSession(id: id) }
            throw Cut()
        }
        func abortSession(id: String) async {}
        func settleSession(_ session: PendingSession) async throws -> SessionSettlement { throw Cut() }
    }

    @Test(
        "cut off after staging (confirm landed or not): a fresh engine settles, the account is free, the wallet recovers again",
        arguments: TestBackend.allCases, [true, false])
    func cutAfterStaging(backend: TestBackend, confirmLands: Bool) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "resume-\(confirmLands)"
            let base = world.servers[0].baseURL()
            let tokens: TokenProvider = { purpose in try await world.token(for: user, purpose: purpose.rawValue) }
            let client = ReferenceServerClient(base: base)
            let secretText = SecureBytes(copying: Array(world.webhookSecret.utf8))
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-resume")
            try await client.registerCustodianShare(signing[1], clientId: user, webhookSecret: secretText)
            let cloudKey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
            try await RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: InMemorySigningShareStore(current: signing[0]), tokens: tokens,
                    webhookSecret: secretText)
            ).backup(method: .cloudKey, secret: cloudKey)

            let device = InMemorySigningShareStore()
            var cut = client.engineConfiguration(userId: user, store: device, tokens: tokens, webhookSecret: secretText)
            cut.custodian = LosingNetwork(try #require(cut.custodian as? HTTPCustodian), confirmLands: confirmLands)
            await #expect(throws: Cut.self) {
                try await RecoveryEngine(configuration: cut).recover(method: .cloudKey, secret: cloudKey)
            }
            let staged = try #require(await device.stagedShare())
            #expect(await device.pendingSession()?.purpose == .recovery)

            // Not settled, the session holds the account: another device is refused.
            let elsewhere = RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: InMemorySigningShareStore(), tokens: tokens, webhookSecret: secretText))
            if !confirmLands {
                await #expect(throws: ShareRecoveryError(.operationInProgress, "")) {
                    try await elsewhere.recover(method: .cloudKey, secret: cloudKey)
                }
            }

            // The next start: a fresh engine on the same device store.
            let fresh = RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: device, tokens: tokens, webhookSecret: secretText))
            #expect(
                try await fresh.resumeInterruptedOperation()
                    == (confirmLands ? .completed(.recovery) : .rolledBack(.recovery)))
            #expect(await device.pendingSession() == nil)
            #expect(await device.stagedShare() == nil)
            let custodianSets = try await SessionClient(world: world, clientId: user).storedSigningSets()
            if confirmLands {
                #expect(await device.currentShare()?.setId == staged.setId)
                #expect(custodianSets == ["2:\(staged.setId.hex):1"])
            } else {
                #expect(await device.currentShare() == nil)
                #expect(custodianSets == ["2:\(signing[0].setId.hex):0"])
            }
            // The account is free and the wallet recovers again, under the same key.
            let again = try await elsewhere.recover(method: .cloudKey, secret: cloudKey)
            #expect(again.publicKey == signing[0].publicKey)
        }
    }

    @Test(
        "a confirmed session answers its settling DELETE with 409 long after its lifetime",
        arguments: TestBackend.allCases)
    func confirmedSessionsStayAnswerable(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "retained")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-retained")
            try await client.register(signing[1])
            let token = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let session = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: token)
            #expect(try await client.finish(session, token: token).status == 200)
            #expect(try await client.confirm(session.sessionId, token: token).status == 204)
            world.clock.advance(seconds: 86_400)  // a day: far past the 15-minute lifetime
            let later = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let answer = try await client.abort(session.sessionId, token: later)
            #expect(answer.status == 409, "\(answer.text)")
            let custodian = HTTPCustodian(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in later })
            #expect(
                try await custodian.settleSession(PendingSession(sessionId: session.sessionId, purpose: .backup))
                    == .confirmed)
            #expect(
                try await custodian.settleSession(
                    PendingSession(sessionId: "0123456789abcdef0123456789abcdef", purpose: .backup)) == .abandoned)
        }
    }
}
