import ShareCrypto
import ShareRecovery
import Testing

/// The client's role of resharing (docs/formats.md §3), against the custodian's role, through nothing
/// but the messages that cross between them: what `RecoveryEngine` runs for every backup and recovery.
@Suite("Resharing client role")
struct ResharingClientTests {
    let key = SealingKeyPair()

    func signingSet(_ curve: Curve = .secp256k1) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "w", threshold: 2, parties: 2))
    }

    func offer(_ opened: ResharingCustodian.Opened) -> ResharingSessionOffer {
        ResharingSessionOffer(sessionId: "s", plan: opened.plan, custodianDealings: opened.offeredDealings)
    }

    @Test(
        "backup then recovery: both roles end with shares of one new set under the old public key",
        arguments: Curve.allCases)
    func backupThenRecovery(curve: Curve) throws {
        let signing = try signingSet(curve)
        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.cloudKey), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        let dealt = try ResharingClient.accept(offer: offer(opened), ownShare: signing[0], newKind: .backup)
        // Our own sub-share never leaves the device.
        #expect(Set(dealt.outgoingDealing.subShares.keys) == [2])
        let finished = try opened.finish(clientDealing: dealt.outgoingDealing, custodianPublicKey: key.publicKey)
        let userBackup = try dealt.finish(
            result: ResharingSessionResult(
                newCommitments: finished.newShares[0].commitments, custodianBackupShares: finished.custodianBackupShares
            ))
        #expect(
            userBackup.kind == .backup && userBackup.generation == 0 && userBackup.publicKey == signing[0].publicKey)
        #expect(userBackup.setId == finished.newShares[0].setId)

        let recovering = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .recovery(.cloudKey), clientShare: userBackup),
            signingShares: [signing[1]], candidates: finished.custodianBackupShares, custodianKey: key)
        let dealtAgain = try ResharingClient.accept(offer: offer(recovering), ownShare: userBackup, newKind: .signing)
        let done = try recovering.finish(clientDealing: dealtAgain.outgoingDealing, custodianPublicKey: key.publicKey)
        let newSigning = try dealtAgain.finish(
            result: ResharingSessionResult(newCommitments: done.newShares[0].commitments, custodianBackupShares: []))
        #expect(
            newSigning.kind == .signing && newSigning.generation == 1 && newSigning.publicKey == signing[0].publicKey)
        // The two new shares interpolate to the old key: x_1·λ_1 + x_2·λ_2 = x, checked as points.
        let together = try Resharing.reshare(
            [newSigning, done.newShares[0]], newThreshold: 2, newParties: 2, newKind: .signing, newGeneration: 2)
        #expect(together.allSatisfy { $0.publicKey == signing[0].publicKey })
        #expect(dealtAgain.description.contains("redacted"))
    }

    @Test("a plan for another set, kind, shape or generation is invalidParameters; nothing is dealt")
    func refusesForeignPlans() throws {
        let signing = try signingSet()
        let other = try signingSet()
        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        let plan = opened.plan
        func refused(_ plan: ResharingPlan, ownShare: ShareRecord, newKind: SetKind) {
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try ResharingClient.accept(
                    offer: ResharingSessionOffer(sessionId: "s", plan: plan, custodianDealings: opened.offeredDealings),
                    ownShare: ownShare, newKind: newKind)
            }
            #expect(error?.code == .invalidParameters)
        }
        // Another wallet's share.
        refused(plan, ownShare: other[0], newKind: .backup)
        // A recovery where a backup was asked for.
        refused(plan, ownShare: signing[0], newKind: .signing)
        // A backup that moves the generation.
        refused(
            try ResharingPlan(
                oldSet: plan.oldSet, dealers: plan.dealers, newThreshold: 2, newParties: 2, newKind: .backup,
                newGeneration: 1,
                newSetId: plan.newSetId),
            ownShare: signing[0], newKind: .backup)
        // A recovery that does not move it.
        refused(
            try ResharingPlan(
                oldSet: plan.oldSet, dealers: plan.dealers, newThreshold: 2, newParties: 2, newKind: .signing,
                newGeneration: 0,
                newSetId: plan.newSetId),
            ownShare: signing[0], newKind: .signing)
        // Another shape: 2-of-3 instead of the wallet's 2-of-2.
        refused(
            try ResharingPlan(
                oldSet: plan.oldSet, dealers: plan.dealers, newThreshold: 2, newParties: 3, newKind: .backup,
                newGeneration: 0,
                newSetId: plan.newSetId),
            ownShare: signing[0], newKind: .backup)
    }

    @Test("a custodian dealing that fails its check names the custodian; other commitments are publicKeyMismatch")
    func refusesBadCustodianAnswers() throws {
        let signing = try signingSet()
        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        var dealings = opened.offeredDealings
        let bad = dealings[0]
        let subShare = try #require(bad.subShares[1])
        dealings[0] = Dealing(
            dealerIndex: bad.dealerIndex, commitments: bad.commitments,
            subShares: [1: subShare + Scalar.random(on: .secp256k1)])
        let error = #expect(throws: ShareRecoveryError.self) {
            _ = try ResharingClient.accept(
                offer: ResharingSessionOffer(sessionId: "s", plan: opened.plan, custodianDealings: dealings),
                ownShare: signing[0], newKind: .backup)
        }
        #expect(
            error?.code == .subShareCheckFailed && error?.reason.contains("dealer 2's") == true,
            "\(String(describing: error))")

        let dealt = try ResharingClient.accept(offer: offer(opened), ownShare: signing[0], newKind: .backup)
        let mismatch = #expect(throws: ShareRecoveryError.self) {
            _ = try dealt.finish(
                result: ResharingSessionResult(newCommitments: signing[0].commitments, custodianBackupShares: []))
        }
        #expect(mismatch?.code == .publicKeyMismatch)
    }
}
