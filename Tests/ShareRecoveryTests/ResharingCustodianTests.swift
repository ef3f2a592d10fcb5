import ShareCrypto
import ShareRecovery
import Testing

/// The one custodian role of resharing (docs/formats.md §3), driven directly: what `LocalCustodian` and
/// the reference server both keep.
@Suite("Resharing custodian role")
struct ResharingCustodianTests {
    let key = SealingKeyPair()

    func signingSet(_ curve: Curve = .secp256k1) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "w", threshold: 2, parties: 2))
    }

    /// Backup, then recovery, each through the role's values with the client's dealing in between.
    @Test("backup and recovery through open → finish → the set to keep", arguments: Curve.allCases)
    func backupThenRecovery(curve: Curve) throws {
        let signing = try signingSet(curve)
        let backupRequest = ResharingSessionRequest(clientId: "c", purpose: .backup(.cloudKey), clientShare: signing[0])
        let opened = try ResharingCustodian.open(
            request: backupRequest, signingShares: [signing[1]], candidates: [], custodianKey: key)
        #expect(opened.plan.newKind == .backup && opened.plan.newGeneration == 0 && opened.expectedSet == nil)
        #expect(opened.offeredDealings.allSatisfy { Set($0.subShares.keys) == [1] })
        let clientDealing = try ResharingDealer.deal(share: signing[0], plan: opened.plan)
        let finished = try opened.finish(clientDealing: clientDealing, custodianPublicKey: key.publicKey)
        #expect(finished.pending.signingSetToKeep == nil && finished.pending.expectedSet == nil)
        #expect(try finished.pending.confirm(currentSets: [signing[1].setId]) == nil)
        #expect(finished.custodianBackupShares.count == 1)
        let userBackup = try ResharingReceiver.receive(
            partyIndex: 1, plan: opened.plan, dealings: opened.offeredDealings + [clientDealing])

        // Recovery from the user's backup share and the custodian backup share the backup produced.
        let recoveryRequest = ResharingSessionRequest(
            clientId: "c", purpose: .recovery(.cloudKey), clientShare: userBackup)
        let recovering = try ResharingCustodian.open(
            request: recoveryRequest, signingShares: [signing[1]], candidates: finished.custodianBackupShares,
            custodianKey: key)
        #expect(recovering.plan.newKind == .signing && recovering.plan.newGeneration == 1)
        #expect(recovering.expectedSet == signing[1].setId)
        let done = try recovering.finish(
            clientDealing: try ResharingDealer.deal(share: userBackup, plan: recovering.plan),
            custodianPublicKey: key.publicKey)
        let keep = try #require(try done.pending.confirm(currentSets: [signing[1].setId]))
        #expect(keep.map(\.partyIndex) == [2] && keep[0].publicKey == signing[0].publicKey && keep[0].generation == 1)
        // Another recovery confirmed first: this one must not replace its set.
        let error = #expect(throws: ShareRecoveryError.self) {
            try done.pending.confirm(currentSets: keep.map(\.setId))
        }
        #expect(error?.code == .conflict)
    }

    @Test(
        "the role's refusals: a backup share to back up, no custodian share, a dealing from another party, dealings that do not fit"
    )
    func refusals() throws {
        let signing = try signingSet()
        let other = try signingSet()
        let backupSet = try Resharing.reshare(
            signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
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
            _ = try ResharingCustodian.Opened(
                purpose: opened.purpose, plan: opened.plan, dealings: opened.offeredDealings, expectedSet: nil)
        }
        #expect(error?.code == .invalidParameters)
    }

    /// A backup's opened state and a recovery's pending state, restored from their bytes, behave as
    /// the originals: the same new set from the same client dealing, the same set to keep.
    @Test("the states survive their byte form", arguments: Curve.allCases)
    func statesRoundTrip(curve: Curve) throws {
        let signing = try signingSet(curve)
        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.passkey), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        let restored = try ResharingCustodian.Opened(serialized: opened.serialized())
        #expect(restored.purpose == opened.purpose && restored.plan == opened.plan && restored.expectedSet == nil)
        #expect(restored.serialized() == opened.serialized())
        let clientDealing = try ResharingDealer.deal(share: signing[0], plan: opened.plan)
        let original = try opened.finish(clientDealing: clientDealing, custodianPublicKey: key.publicKey)
        let again = try restored.finish(clientDealing: clientDealing, custodianPublicKey: key.publicKey)
        #expect(again.newShares == original.newShares && again.result.newCommitments == original.result.newCommitments)
        let backupPending = try ResharingCustodian.Pending(serialized: try original.pending.serialized())
        #expect(backupPending.purpose == .backup(.passkey) && backupPending.signingSetToKeep == nil)

        let userBackup = try ResharingReceiver.receive(
            partyIndex: 1, plan: opened.plan, dealings: opened.offeredDealings + [clientDealing])
        let recovering = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .recovery(.passkey), clientShare: userBackup),
            signingShares: [signing[1]], candidates: original.custodianBackupShares, custodianKey: key)
        let restoredRecovery = try ResharingCustodian.Opened(serialized: recovering.serialized())
        #expect(restoredRecovery.expectedSet == signing[1].setId && restoredRecovery.purpose == .recovery(.passkey))
        let pending = try restoredRecovery.finish(
            clientDealing: try ResharingDealer.deal(share: userBackup, plan: recovering.plan),
            custodianPublicKey: key.publicKey
        ).pending
        let restoredPending = try ResharingCustodian.Pending(serialized: try pending.serialized())
        #expect(
            restoredPending.signingSetToKeep == pending.signingSetToKeep
                && restoredPending.expectedSet == signing[1].setId)
        #expect(try restoredPending.confirm(currentSets: [signing[1].setId]) == pending.signingSetToKeep)
    }

    @Test("damaged state bytes are refused as malformedRecord")
    func damagedStates() throws {
        let signing = try signingSet()
        let opened = try ResharingCustodian.open(
            request: ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]),
            signingShares: [signing[1]], candidates: [], custodianKey: key)
        let bytes = opened.serialized().revealedBytes()
        let pendingBytes = try opened.finish(
            clientDealing: try ResharingDealer.deal(share: signing[0], plan: opened.plan),
            custodianPublicKey: key.publicKey
        ).pending.serialized().revealedBytes()
        func changed(_ original: [UInt8], at index: Int, to value: UInt8) -> [UInt8] {
            var copy = original
            copy[index] = value
            return copy
        }
        // The plan as JSON of another spelling (a space after its opening brace): the same plan, not its byte form.
        let planCount = Int(bytes[9]) << 8 | Int(bytes[10])
        let respelled =
            Array(bytes[..<9]) + [UInt8((planCount + 1) >> 8), UInt8((planCount + 1) & 0xFF), bytes[11], 0x20]
            + Array(bytes[12...])
        let damagedOpened: [[UInt8]] = [
            Array(bytes.dropLast()), bytes + [0], changed(bytes, at: 0, to: 0x58), changed(bytes, at: 4, to: 2),
            changed(bytes, at: 6, to: 3), changed(bytes, at: 8, to: 2), pendingBytes, respelled,
        ]
        for damaged in damagedOpened {
            let error = #expect(throws: ShareRecoveryError.self) {
                try ResharingCustodian.Opened(serialized: SecureBytes(copying: damaged))
            }
            #expect(error?.code == .malformedRecord)
        }
        // A backup claiming a share it does not carry, a trailing byte, another round, an opened state.
        for damaged in [
            Array(pendingBytes.dropLast()) + [1], pendingBytes + [0], changed(pendingBytes, at: 5, to: 3), bytes,
        ] {
            let error = #expect(throws: ShareRecoveryError.self) {
                try ResharingCustodian.Pending(serialized: SecureBytes(copying: damaged))
            }
            #expect(error?.code == .malformedRecord)
        }
    }

    /// The in-process keeper advances each session once: a replayed finish finds no open session, a
    /// replayed confirm changes nothing, and a recovery makes its set current once.
    @Test("LocalCustodian: a replayed finish or confirm")
    func replays() async throws {
        let signing = try signingSet()
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: key, shareSource: integrator, random: DeterministicRandom(seed: [7]))
        await custodian.register(signingShares: [signing[1]], clientId: "c")
        let backup = try await custodian.openSession(
            ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0]))
        let backupDealing = try ResharingDealer.deal(share: signing[0], plan: backup.plan)
        let result = try await custodian.finishSession(id: backup.sessionId, clientDealing: backupDealing)
        var error = await #expect(throws: ShareRecoveryError.self) {
            _ = try await custodian.finishSession(id: backup.sessionId, clientDealing: backupDealing)
        }
        #expect(error?.code == .notFound)
        try await custodian.confirmSession(id: backup.sessionId)
        try await custodian.confirmSession(id: backup.sessionId)
        #expect(await custodian.currentSigningShares(clientId: "c") == [signing[1]])
        for share in result.custodianBackupShares { try await integrator.deliverBackupShare(share, clientId: "c") }

        let userBackup = try ResharingReceiver.receive(
            partyIndex: 1, plan: backup.plan, dealings: backup.custodianDealings + [backupDealing])
        let offer = try await custodian.openSession(
            ResharingSessionRequest(clientId: "c", purpose: .recovery(.password), clientShare: userBackup))
        let dealing = try ResharingDealer.deal(share: userBackup, plan: offer.plan)
        _ = try await custodian.finishSession(id: offer.sessionId, clientDealing: dealing)
        let recovered = try ResharingReceiver.receive(
            partyIndex: 1, plan: offer.plan, dealings: offer.custodianDealings + [dealing])
        try await custodian.confirmSession(id: offer.sessionId)
        let current = await custodian.currentSigningShares(clientId: "c")
        #expect(current.map(\.setId) == [recovered.setId] && current[0].generation == 1)
        try await custodian.confirmSession(id: offer.sessionId)
        #expect(await custodian.currentSigningShares(clientId: "c") == current)
        error = await #expect(throws: ShareRecoveryError.self) {
            try await custodian.confirmSession(id: "unknown")
        }
        #expect(error?.code == .notFound)
    }

    /// The role's one-session-per-account rule, kept by the in-process keeper as by the reference
    /// server (RecoverySessionTests): a second open is `operationInProgress` while the first session
    /// is open or finished, for that client only, and admitted once it is confirmed, aborted or settled.
    @Test("LocalCustodian: one backup or recovery per client at a time")
    func oneAtATime() async throws {
        let signing = try signingSet()
        let otherSet = try signingSet()
        let custodian = LocalCustodian(key: key, shareSource: InMemoryIntegrator())
        await custodian.register(signingShares: [signing[1]], clientId: "c")
        await custodian.register(signingShares: [otherSet[1]], clientId: "d")
        let request = ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: signing[0])
        func expectRefused(_ when: Comment) async {
            let error = await #expect(throws: ShareRecoveryError.self, when) {
                _ = try await custodian.openSession(request)
            }
            #expect(error?.code == .operationInProgress, when)
        }

        let first = try await custodian.openSession(request)
        await expectRefused("while the first session is open")
        // Another client's account is not held.
        let other = try await custodian.openSession(
            ResharingSessionRequest(clientId: "d", purpose: .backup(.password), clientShare: otherSet[0]))
        _ = try await custodian.finishSession(
            id: first.sessionId, clientDealing: try ResharingDealer.deal(share: signing[0], plan: first.plan))
        await expectRefused("while the first session is finished and not confirmed")
        try await custodian.confirmSession(id: first.sessionId)

        let second = try await custodian.openSession(request)
        await custodian.abortSession(id: second.sessionId)
        let third = try await custodian.openSession(request)
        #expect(
            await custodian.settleSession(PendingSession(sessionId: third.sessionId, purpose: .backup)) == .abandoned)
        _ = try await custodian.openSession(request)
        await custodian.abortSession(id: other.sessionId)
    }

    /// The codes the in-process custodian answers are the role's, as the reference server's are
    /// (RecoverySessionTests): a backup of a backup share is the caller's mistake, a set the
    /// custodian does not hold is `noMatchingShare`.
    @Test("LocalCustodian answers the role's refusal codes")
    func localCodes() async throws {
        let signing = try signingSet()
        let backupSet = try Resharing.reshare(
            signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
        let custodian = LocalCustodian(key: key, shareSource: InMemoryIntegrator())
        await custodian.register(signingShares: [signing[1]], clientId: "c")
        for (share, code) in [
            (backupSet[0], ShareRecoveryError.Code.invalidParameters), (try signingSet()[0], .noMatchingShare),
        ] {
            let error = await #expect(throws: ShareRecoveryError.self) {
                _ = try await custodian.openSession(
                    ResharingSessionRequest(clientId: "c", purpose: .backup(.password), clientShare: share))
            }
            #expect(error?.code == code)
        }
    }
}
