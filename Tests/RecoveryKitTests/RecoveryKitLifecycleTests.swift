import RecoveryKit
import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

/// Kits as a recovery method of the engine's lifecycle: listed, recovered from, voided by a new kit
/// or a typed recovery code, deleted, and spent by a recovery.
@Suite("Recovery kits in the lifecycle")
struct RecoveryKitLifecycleTests {
    typealias World = EngineWorld

    static let twoOfThree = [SLIP39.Group(memberThreshold: 2, memberCount: 3)]
    static let passphrase = SecureBytes(copying: Array("paper kit".utf8))

    @Test(arguments: Curve.allCases)
    func aKitIsListedRecoversAndIsSpent(curve: Curve) async throws {
        let world = try await World(curve: curve, seed: "kit lifecycle \(curve)")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        let kit = try await world.engine.createRecoveryKit(groups: Self.twoOfThree, passphrase: Self.passphrase)
        #expect(kit.count == 1 && kit[0].count == 3)
        #expect(try await world.engine.listRecoveryMethods() == [.backup(.password), .recoveryKit])
        #expect(try await world.engine.activatedRecoveryMethods() == [.password, .recoveryCode])
        #expect(try await world.engine.isRecoveryKitActive())
        #expect(await world.custodianShares(.recoveryCode).count == 1)

        let (engine, store) = world.newDevice()
        // Fewer shares than the threshold, or a wrong passphrase, change nothing.
        await #expect(throws: RecoveryKitError(.insufficientMembers, "")) {
            try await engine.recoverFromKit([kit[0][1]], passphrase: Self.passphrase)
        }
        await #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try await engine.recoverFromKit(
                [kit[0][0], kit[0][2]], passphrase: SecureBytes(copying: Array("wrong".utf8)))
        }
        #expect(await store.currentShare() == nil)
        #expect(await store.stagedShare() == nil)

        let log = StatusLog()
        let recovered = try await engine.recoverFromKit(
            [kit[0][2], kit[0][0]], passphrase: Self.passphrase, progress: log.append)
        #expect(log.all == RecoveryStatus.sequence)
        #expect(recovered.publicKey == world.signing[0].publicKey)
        #expect(recovered.generation == 1)
        #expect(await store.currentShare() == recovered)

        // Like a recovery code, the kit is spent: no cipherText, no custodian share, not listed.
        #expect(try await engine.listRecoveryMethods() == [.backup(.password)])
        #expect(await world.custodianShares(.recoveryCode).isEmpty)
        await #expect(throws: ShareRecoveryError(.notFound, "")) {
            try await engine.recoverFromKit([kit[0][0], kit[0][1]], passphrase: Self.passphrase)
        }
    }

    @Test func aNewKitVoidsTheOldOne() async throws {
        let world = try await World(curve: .ed25519, seed: "kit rotation")
        let old = try await world.engine.createRecoveryKit()
        let oldSecret = try SLIP39.combine(old[0])
        let new = try await world.engine.createRecoveryKit()
        #expect(try await world.engine.listRecoveryMethods() == [.recoveryKit])

        // The old kit's set has no custodian share left, and the stored cipherText is the new kit's.
        let candidates = await world.integrator.fetchBackupShares(clientId: world.userId)
        #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try BackupShareKit.userShare(masterSecret: oldSecret, custodianShares: candidates)
        }
        let (engine, store) = world.newDevice()
        await #expect(throws: ShareRecoveryError(.authenticationFailed, "")) { try await engine.recoverFromKit(old[0]) }
        #expect(await store.currentShare() == nil)

        let recovered = try await engine.recoverFromKit(new[0])
        #expect(recovered.publicKey == world.signing[0].publicKey)
    }

    @Test func aTypedRecoveryCodeAndAKitShareOneSlot() async throws {
        let world = try await World(seed: "kit slot")
        let kit = try await world.engine.createRecoveryKit()
        let typed = try await world.engine.backup(method: .recoveryCode, secret: .text("ABCD-EFGH-IJKL"))
        // The typed code replaced the kit; it is listed as itself and the kit calls refuse to touch it.
        #expect(try await world.engine.listRecoveryMethods() == [.backup(.recoveryCode)])
        #expect(try await !world.engine.isRecoveryKitActive())
        await #expect(throws: ShareRecoveryError(.notFound, "")) {
            try await world.engine.deleteRecoveryKit(force: true)
        }
        let (engine, _) = world.newDevice()
        await #expect(throws: ShareRecoveryError(.notFound, "")) { try await engine.recoverFromKit(kit[0]) }

        // A new kit voids the typed code in turn: its cipherText's custodian share is gone.
        _ = try await world.engine.createRecoveryKit()
        await #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
            try await engine.recover(method: .recoveryCode, cipherText: typed.base64, secret: .text("ABCD-EFGH-IJKL"))
        }
        // A typed code cannot pose as a kit.
        await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            try await world.engine.backup(
                method: .recoveryCode, secret: .text("x"), keyId: BackupShareKit.lifecycleKeyId)
        }
    }

    @Test func deletingAKit() async throws {
        let world = try await World(seed: "kit delete")
        _ = try await world.engine.createRecoveryKit()
        await #expect(throws: ShareRecoveryError(.invalidParameters, "")) { try await world.engine.deleteRecoveryKit() }
        try await world.engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        try await world.engine.deleteRecoveryKit()
        #expect(try await world.engine.listRecoveryMethods() == [.backup(.cloudKey)])
        #expect(await world.custodianShares(.recoveryCode).isEmpty)
        #expect(await world.custodianShares(.cloudKey).count == 1)
        await #expect(throws: ShareRecoveryError(.notFound, "")) {
            try await world.engine.deleteRecoveryKit(force: true)
        }
    }

    @Test func aBadLayoutStoresNothing() async throws {
        let world = try await World(seed: "kit layout")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        let before = await world.integrator.fetchBackupShares(clientId: world.userId)
        await #expect(throws: RecoveryKitError(.multipleMembersWithThresholdOne, "")) {
            try await world.engine.createRecoveryKit(groups: [SLIP39.Group(memberThreshold: 1, memberCount: 2)])
        }
        await #expect(throws: RecoveryKitError(.invalidPassphrase, "")) {
            try await world.engine.createRecoveryKit(passphrase: SecureBytes(copying: [0x0A]))
        }
        #expect(try await world.engine.listRecoveryMethods() == [.backup(.password)])
        #expect(await world.integrator.fetchBackupShares(clientId: world.userId) == before)
    }

    /// The documented derivation, done by hand as another implementation would: the combined master
    /// secret's lowercase hex is the recovery code of the stored §5 cipherText, and the set is found
    /// by the ordinary §7 selection.
    @Test func aKitCipherTextOpensWithTheHexOfItsMasterSecret() async throws {
        let world = try await World(curve: .ed25519, seed: "kit interop")
        let kit = try await world.engine.createRecoveryKit(groups: Self.twoOfThree)
        let secret = try SLIP39.combine([kit[0][0], kit[0][1]])
        let code = Hex.encode(secret.revealedBytes())
        #expect(code == code.lowercased() && code.count == 64)
        let stored = try CipherText(
            base64: try await world.integrator.fetchCipherText(userId: world.userId, method: .recoveryCode))
        #expect(stored.method == .recoveryCode && stored.keyId == "slip39-kit")
        let userShare = try stored.decrypt(secret: .text(code))
        #expect(userShare.secret?.rawRepresentation == secret)
        let (engine, _) = world.newDevice()
        let recovered = try await engine.recover(method: .recoveryCode, secret: .text(code))
        #expect(recovered.publicKey == world.signing[0].publicKey)
    }
}
