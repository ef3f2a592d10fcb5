import ShareCrypto
import ShareRecovery
import Testing

/// The one custodian role of resharing (FORMATS.md §3), driven directly: what `LocalCustodian` and
/// the reference server both keep.
@Suite("Resharing custodian role")
struct ResharingCustodianTests {
    let key = SealingKeyPair()

    func signingSet(_ curve: Curve = .secp256k1) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(parameters: DKGParameters(curve: curve, walletId: "w", threshold: 2, parties: 2))
    }

    /// Backup, then recovery, each through the role's values with the client's dealing in between.
    @Test("backup and recovery through open → finish → the set to keep", arguments: Curve.allCases)
    func backupThenRecovery(curve: Curve) throws {
        let signing = try signingSet(curve)
        let backupRequest = ResharingSessionRequest(clientId: "c", purpose: .backup(.cloudKey), clientShare: signing[0])
        let opened = try ResharingCustodian.open(request: backupRequest, signingShares: [signing[1]], candidates: [], custodianKey: key)
        #expect(opened.plan.newKind == .backup && opened.plan.newGeneration == 0 && opened.expectedSet == nil)
        #expect(opened.offeredDealings.allSatisfy { Set($0.subShares.keys) == [1] })
        let clientDealing = try ResharingDealer.deal(share: signing[0], plan: opened.plan)
        let finished = try opened.finish(clientDealing: clientDealing, custodianPublicKey: key.publicKey)
        #expect(finished.signingSetToKeep == nil)
        #expect(finished.custodianBackupShares.count == 1)
        let userBackup = try ResharingReceiver.receive(partyIndex: 1, plan: opened.plan, dealings: opened.offeredDealings + [clientDealing])

        // Recovery from the user's backup share and the custodian backup share the backup produced.
        let recoveryRequest = ResharingSessionRequest(clientId: "c", purpose: .recovery(.cloudKey), clientShare: userBackup)
        let recovering = try ResharingCustodian.open(
            request: recoveryRequest, signingShares: [signing[1]], candidates: finished.custodianBackupShares, custodianKey: key)
        #expect(recovering.plan.newKind == .signing && recovering.plan.newGeneration == 1)
        #expect(recovering.expectedSet == signing[1].setId)
        let done = try recovering.finish(
            clientDealing: try ResharingDealer.deal(share: userBackup, plan: recovering.plan), custodianPublicKey: key.publicKey)
        let keep = try #require(done.signingSetToKeep)
        #expect(keep.map(\.partyIndex) == [2] && keep[0].publicKey == signing[0].publicKey && keep[0].generation == 1)
        try done.checkConfirmable(current: [signing[1]])
        // Another recovery confirmed first: this one must not replace its set.
        let error = #expect(throws: ShareRecoveryError.self) { try done.checkConfirmable(current: keep) }
        #expect(error?.code == .conflict)
    }

    @Test("the role's refusals: a backup share to back up, no custodian share, a dealing from another party, dealings that do not fit")
    func refusals() throws {
        let signing = try signingSet()
        let other = try signingSet()
        let backupSet = try Resharing.reshare(signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
        var error = #expect(throws: ShareRecoveryError.self) {
            _ = try ResharingCustodian.open(
                request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: backupSet[0]),
                signingShares: [signing[1]], candidates: [], custodianKey: key)
        }
        #expect(error?.code == .invalidParameters)
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try ResharingCustodian.open(
                request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]),
                signingShares: [other[1]], candidates: [], custodianKey: key)
        }
        #expect(error?.code == .noMatchingShare)

        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        let custodianDealing = try ResharingDealer.deal(share: signing[1], plan: opened.plan)
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try opened.finish(clientDealing: custodianDealing, custodianPublicKey: key.publicKey)
        }
        #expect(error?.code == .dealerCheckFailed)
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try ResharingCustodian.Opened(purpose: opened.purpose, plan: opened.plan, dealings: opened.offeredDealings, expectedSet: nil)
        }
        #expect(error?.code == .invalidParameters)
    }
}
