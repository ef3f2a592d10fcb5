import ShareCrypto
import Testing

@testable import ShareRecovery

/// Backup → recovery round trips across every method × curve × (2-of-2, 2-of-3).
@Suite("Round trips")
struct RoundTripTests {
    static let cheap = Argon2idParameters.minimum

    static func secret(for method: BackupMethod, random: some RandomSource) -> BackupSecret {
        switch method.kdf {
        case .argon2id13: .text("correct horse \(method)")
        case .hkdfSHA256: .keyMaterial(random.secureBytes(count: 32))
        }
    }

    struct Layout: Sendable, CustomStringConvertible {
        let threshold: Int, parties: Int
        var description: String { "\(threshold)-of-\(parties)" }
    }

    static let layouts = [Layout(threshold: 2, parties: 2), Layout(threshold: 2, parties: 3)]

    @Test(arguments: Curve.allCases, layouts)
    func everyMethodRecoversTheSameKey(curve: Curve, layout: Layout) async throws {
        let random = DeterministicRandom(seed: Array("round-trip \(curve) \(layout)".utf8))
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(
            curve: curve, walletId: "w-\(curve)", threshold: layout.threshold, parties: layout.parties, using: random)
        for method in BackupMethod.allCases {
            let secret = Self.secret(for: method, random: random)
            let backup = try BackupCreation.create(
                signingShares: Array(signing.prefix(layout.threshold)), method: method, secret: secret,
                custodianPublicKey: custodian.publicKey, argon2: Self.cheap, keyId: "key-1", using: random)
            #expect(backup.custodianShares.count == layout.parties - 1)
            var statuses: [RecoveryStatus] = []
            let recovered = try await OfflineRecovery.recover(
                cipherText: backup.cipherText.base64, secret: secret,
                custodianShares: backup.custodianShares.map(\.json),
                custodianKey: custodian, progress: { statuses.append($0) }, using: random)
            #expect(statuses == RecoveryStatus.sequence)
            #expect(recovered.count == layout.parties)
            #expect(recovered.allSatisfy { $0.publicKey == signing[0].publicKey && $0.kind == .signing })
            #expect(recovered[0].generation == signing[0].generation + 1)
            #expect(recovered[0].setId != signing[0].setId)
            #expect(recovered[0].setId != backup.backupSet[0].setId)

            // An old share with a new share does not reconstruct the key: combine by Lagrange and compare.
            let old = signing[0].secret!, new = recovered[1].secret!
            let lambda1 = try Shamir.lagrangeCoefficientAtZero(index: 1, indices: [1, 2], curve: curve)
            let lambda2 = try Shamir.lagrangeCoefficientAtZero(index: 2, indices: [1, 2], curve: curve)
            let mixed = lambda1 * old + lambda2 * new
            #expect(try Point(generatorTimes: mixed) != signing[0].publicKey)
            let matched = lambda1 * recovered[0].secret! + lambda2 * new
            #expect(try Point(generatorTimes: matched) == signing[0].publicKey)
        }
    }

    @Test func wrongSecretIsAuthenticationFailed() async throws {
        let random = DeterministicRandom(seed: Array("wrong".utf8))
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w", using: random)
        let backup = try BackupCreation.create(
            signingShares: signing, method: .password, secret: .text("right"), custodianPublicKey: custodian.publicKey,
            argon2: Self.cheap, using: random)
        var statuses: [RecoveryStatus] = []
        await #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try await OfflineRecovery.recover(
                cipherText: backup.cipherText.base64, secret: .text("wrong"),
                custodianShares: backup.custodianShares.map(\.json), custodianKey: custodian,
                progress: { statuses.append($0) })
        }
        // The failure happened in decryptingShare/parsingShare: nothing after it was reported.
        #expect(statuses == [.readingShare, .decryptingShare, .parsingShare])
    }

    @Test("an offline recovery stores the whole new set by party just before done; a failing store stops it")
    func offlineStoreGetsTheWholeSet() async throws {
        struct DiskFull: Error {}
        let random = DeterministicRandom(seed: Array("offline store".utf8))
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(
            curve: .secp256k1, walletId: "w", threshold: 2, parties: 3, using: random)
        let secret = Self.secret(for: .cloudKey, random: random)
        let backup = try BackupCreation.create(
            signingShares: Array(signing.prefix(2)), method: .cloudKey, secret: secret,
            custodianPublicKey: custodian.publicKey, keyId: "key-1", using: random)
        let shares = backup.custodianShares.map(\.json)
        let stored = Locked<[ShareRecord]>([])
        // Each status with whether the store had run when it was reported.
        var seen: [(RecoveryStatus, Bool)] = []
        let recovered = try await OfflineRecovery.recover(
            cipherText: backup.cipherText.base64, secret: secret, custodianShares: shares, custodianKey: custodian,
            store: { set in stored.withLock { $0 = set } },
            progress: { status in seen.append((status, stored.withLock { !$0.isEmpty })) }, using: random)
        #expect(seen.map(\.0) == RecoveryStatus.sequence)
        #expect(seen.map(\.1) == RecoveryStatus.sequence.map { $0 == .done })
        #expect(stored.withLock { $0 } == recovered)
        #expect(recovered.map(\.partyIndex) == [1, 2, 3])
        #expect(Set(recovered.map(\.setId)).count == 1)

        var statuses: [RecoveryStatus] = []
        let error = await StoreTestSupport.expectError(.storageFailure) {
            _ = try await OfflineRecovery.recover(
                cipherText: backup.cipherText.base64, secret: secret, custodianShares: shares,
                custodianKey: custodian, store: { _ in throw DiskFull() }, progress: { statuses.append($0) },
                using: random)
        }
        #expect(error?.reason.contains("DiskFull") == true)
        #expect(statuses == Array(RecoveryStatus.sequence.dropLast()))
    }

    @Test func passwordIsNormalisedToNFC() throws {
        let random = DeterministicRandom(seed: Array("nfc".utf8))
        let signing = try KeyGeneration.generate(curve: .ed25519, walletId: "w", using: random)
        let custodian = SealingKeyPair(using: random)
        let backup = try BackupCreation.create(
            signingShares: signing, method: .password, secret: .text("caf\u{E9}"),
            custodianPublicKey: custodian.publicKey,
            argon2: Self.cheap, using: random)
        let record = try backup.cipherText.decrypt(secret: .text("cafe\u{301}"))
        #expect(record.partyIndex == 1)
    }
}
