import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// The engine against an in-process custodian and integrator.
@Suite("Recovery engine")
struct RecoveryEngineTests {
    typealias World = EngineWorld

    @Test(arguments: Curve.allCases)
    func backupLoseRecover(curve: Curve) async throws {
        let world = try await World(curve: curve, seed: "engine \(curve)")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        try await world.engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)), keyId: "kms/1")
        #expect(try await world.engine.activatedRecoveryMethods() == [.password, .cloudKey])

        let (engine, store) = world.newDevice()
        let log = StatusLog()
        let recovered = try await engine.recover(method: .password, secret: .text("hunter2"), progress: log.append)
        #expect(log.all == RecoveryStatus.sequence)
        #expect(recovered.publicKey == world.signing[0].publicKey)
        #expect(recovered.generation == 1)
        #expect(await store.currentShare() == recovered)

        // The custodian keeps only the new set: the lost device's share no longer combines with it.
        let custodianShare = try #require(await world.custodian.currentSigningShares(clientId: "user-1").first)
        #expect(custodianShare.setId == recovered.setId)
        #expect(!(world.signing[0].isSameSet(as: custodianShare)))

        // Backups survive a recovery: the cloud key still recovers, to generation 2.
        let again = try await engine.recover(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        #expect(again.generation == 2)
        #expect(again.publicKey == world.signing[0].publicKey)
    }

    /// A backup of a backup share is the caller's mistake: `invalidParameters`, the reference server's answer
    /// too; a signing share of a set the custodian does not hold is `noMatchingShare`.
    @Test func backupOfANonSigningShareIsInvalidParameters() async throws {
        let world = try await World(seed: "non-signing-backup")
        let backupSet = try Resharing.reshare(
            world.signing, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0,
            using: DeterministicRandom(seed: Array("backup-set".utf8)))
        let wrongKind = ResharingSessionRequest(
            clientId: "user-1", purpose: .backup(.password), clientShare: backupSet[0])
        await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            try await world.custodian.openSession(wrongKind)
        }

        let otherWallet = try KeyGeneration.generate(
            curve: .secp256k1, walletId: "w-2", using: DeterministicRandom(seed: Array("other".utf8)))
        let unknownSet = ResharingSessionRequest(
            clientId: "user-1", purpose: .backup(.password), clientShare: otherWallet[0])
        await #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try await world.custodian.openSession(unknownSet)
        }
    }

    @Test func twoOfThree() async throws {
        let world = try await World(curve: .ed25519, threshold: 2, parties: 3, seed: "2of3")
        try await world.engine.backup(method: .passkey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        let (engine, _) = world.newDevice()
        let recovered = try await engine.recover(method: .passkey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        #expect(recovered.parties == 3 && recovered.publicKey == world.signing[0].publicKey)
        #expect(await world.custodian.currentSigningShares(clientId: "user-1").map(\.partyIndex) == [2, 3])
    }

    @Test func rotatingAPasswordVoidsTheOldCipherText() async throws {
        let world = try await World(seed: "rotate")
        let old = try await world.engine.backup(method: .password, secret: .text("old"))
        try await world.engine.addOrUpdateRecoveryMethod(.password, secret: .text("new"))
        let (engine, store) = world.newDevice()
        await #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try await engine.recover(method: .password, cipherText: old.base64, secret: .text("old"))
        }
        #expect(await store.currentShare() == nil)
        #expect(await store.stagedShare() == nil)
        try await engine.recover(method: .password, secret: .text("new"))
    }

    @Test func recoveryCodeIsOneTime() async throws {
        let world = try await World(seed: "one-time")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        try await world.engine.backup(method: .recoveryCode, secret: .text("ABCD-EFGH"))
        let (engine, _) = world.newDevice()
        try await engine.recover(method: .recoveryCode, secret: .text("ABCD-EFGH"))
        #expect(try await engine.activatedRecoveryMethods() == [.password])
        await #expect(throws: ShareRecoveryError(.notFound, "")) {
            try await engine.recover(method: .recoveryCode, secret: .text("ABCD-EFGH"))
        }
        // The other method is kept.
        try await engine.recover(method: .password, secret: .text("pw"))
    }

    @Test func deletingTheLastMethodNeedsForce() async throws {
        let world = try await World(seed: "delete")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            try await world.engine.deleteRecoveryMethod(.password)
        }
        try await world.engine.deleteRecoveryMethod(.password, force: true)
        #expect(try await world.engine.isRecoveryActivated() == false)
        await #expect(throws: ShareRecoveryError(.notFound, "")) {
            try await world.engine.deleteRecoveryMethod(.password)
        }
    }

    @Test func failedRecoveryReportsNothingAfterTheFailureAndStoresNothing() async throws {
        let world = try await World(seed: "fail")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let (engine, store) = world.newDevice()
        let log = StatusLog()
        await #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try await engine.recover(method: .password, secret: .text("wrong"), progress: log.append)
        }
        #expect(log.all == [.readingShare, .decryptingShare, .parsingShare])
        #expect(await store.currentShare() == nil)
        // The custodian still holds the original set.
        #expect(await world.custodian.currentSigningShares(clientId: "user-1") == Array(world.signing.dropFirst()))
    }

    @Test func streamVariantYieldsTheSequence() async throws {
        let world = try await World(seed: "stream")
        try await world.engine.backup(method: .iCloud, secret: .keyMaterial(SecureBytes(zeros: 32)))
        let (engine, _) = world.newDevice()
        var statuses: [RecoveryStatus] = []
        for try await status in engine.recoveryStatuses(method: .iCloud, secret: .keyMaterial(SecureBytes(zeros: 32))) {
            statuses.append(status)
        }
        #expect(statuses == RecoveryStatus.sequence)
    }

    @Test func cancellationAbortsCleanly() async throws {
        let world = try await World(seed: "cancel")
        try await world.engine.backup(method: .password, secret: .text("pw"))
        let (engine, store) = world.newDevice()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await engine.recover(method: .password, secret: .text("pw"))
        }
        await #expect(throws: ShareRecoveryError(.cancelled, "")) { try await task.value }
        #expect(await store.currentShare() == nil)
    }
}
