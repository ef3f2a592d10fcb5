import ShareCrypto
import ShareRecovery
import Testing

/// Refresh (docs/formats.md §3) in the engine: the custodian role's values and byte form, and
/// ``RecoveryEngine/refresh()`` with ``LocalCustodian``.
@Suite("Refresh")
struct RefreshTests {
    let key = SealingKeyPair()

    @Test("the role plans the next signing generation of the same set, keeps it, and survives its byte form")
    func role() throws {
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w")
        let request = ResharingSessionRequest(clientId: "c", purpose: .refresh, clientShare: signing[0])
        let opened = try ResharingCustodian.open(
            request: request, signingShares: [signing[1]], candidates: [], custodianKey: key)
        #expect(opened.plan.newKind == .signing && opened.plan.newGeneration == 1)
        #expect(opened.plan.dealers == [1, 2] && opened.expectedSet == signing[0].setId)
        let restored = try ResharingCustodian.Opened(serialized: opened.serialized())
        #expect(restored.purpose == .refresh && restored.plan == opened.plan)

        let dealt = try ResharingClient.accept(
            offer: ResharingSessionOffer(sessionId: "s", plan: opened.plan, custodianDealings: opened.offeredDealings),
            ownShare: signing[0], newKind: .signing)
        let finished = try restored.finish(clientDealing: dealt.outgoingDealing, custodianPublicKey: key.publicKey)
        #expect(finished.custodianBackupShares.isEmpty)
        let pending = try ResharingCustodian.Pending(serialized: try finished.pending.serialized())
        let keep = try #require(try pending.confirm(currentSets: [signing[1].setId]))
        #expect(keep.map(\.partyIndex) == [2] && keep[0].generation == 1 && keep[0].publicKey == signing[0].publicKey)
        let device = try dealt.finish(result: finished.result)
        #expect(device.setId == keep[0].setId && device.commitments == keep[0].commitments)
        // A recovery or another refresh confirmed first: this one must not replace its set.
        #expect(throws: ShareRecoveryError(.conflict, "")) { try pending.confirm(currentSets: keep.map(\.setId)) }
    }

    @Test("the engine refreshes in place; the old share then refreshes and backs up nothing")
    func engine() async throws {
        let signing = try KeyGeneration.generate(curve: .ed25519, walletId: "w")
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: key, shareSource: integrator)
        await custodian.register(signingShares: [signing[1]], clientId: "c")
        let store = InMemorySigningShareStore(current: signing[0])
        let configuration = RecoveryEngine.Configuration(
            userId: "c", custodian: custodian, shareStore: store, cipherTextStore: integrator,
            custodianBackupSink: integrator, argon2: .minimum)
        let new = try await RecoveryEngine(configuration: configuration).refresh()
        #expect(new.generation == 1 && new.publicKey == signing[0].publicKey && new.setId != signing[0].setId)
        let (current, pending) = (await store.currentShare(), await store.pendingSession())
        #expect(current == new && pending == nil)
        let kept = await custodian.currentSigningShares(clientId: "c")
        #expect(kept.map(\.setId) == [new.setId] && kept[0].generation == 1)

        var old = configuration
        old.shareStore = InMemorySigningShareStore(current: signing[0])
        await #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try await RecoveryEngine(configuration: old).refresh()
        }
        await #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try await RecoveryEngine(configuration: old).backup(
                method: .cloudKey, secret: .keyMaterial(SystemRandom().secureBytes(count: 32)))
        }
    }
}
