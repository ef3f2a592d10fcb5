import RecoveryKit
import ShareCrypto
import ShareRecovery
import Testing

/// Kits for the user backup share: export, combine, find the set among custodian shares, recover.
@Suite("Backup share kits")
struct BackupShareKitTests {
    struct Layout: Sendable, CustomStringConvertible {
        let threshold: Int
        let groups: [SLIP39.Group]
        let use: [[Int]]  // member indices used per group (groups not listed are skipped)
        var description: String { "\(threshold):\(groups)" }
    }

    static let layouts = [
        Layout(threshold: 1, groups: [.init(memberThreshold: 1, memberCount: 1)], use: [[0]]),
        Layout(threshold: 1, groups: [.init(memberThreshold: 2, memberCount: 3)], use: [[0, 2]]),
        Layout(
            threshold: 2,
            groups: [.init(memberThreshold: 1, memberCount: 1), .init(memberThreshold: 2, memberCount: 3)],
            use: [[0], [1, 2]]),
    ]

    @Test(arguments: Curve.allCases, layouts)
    func kitRecoversTheWallet(curve: Curve, layout: Layout) async throws {
        let random = DeterministicRandom(seed: Array("kit \(curve) \(layout)".utf8))
        let custodian = SealingKeyPair(using: random)
        let signing = try KeyGeneration.generate(curve: curve, walletId: "w-kit", using: random)
        let key = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: signing, method: .iCloud, secret: key, custodianPublicKey: custodian.publicKey, using: random
        )
        // A second backup of the same wallet: its custodian share is a decoy for the kit's lookup.
        let decoy = try BackupCreation.create(
            signingShares: signing, method: .cloudKey, secret: key, custodianPublicKey: custodian.publicKey,
            using: random)
        let candidates = (decoy.custodianShares + backup.custodianShares).map(\.json)
        let userShare = try backup.cipherText.decrypt(secret: key)

        for passphrase in ["", "TREZOR kit"] {
            let phrase = SecureBytes(copying: Array(passphrase.utf8))
            let kit = try BackupShareKit.export(
                userShare, groupThreshold: layout.threshold, groups: layout.groups, passphrase: phrase, using: random)
            var chosen: [SLIP39.Share] = []
            for (group, members) in layout.use.enumerated() { chosen += members.map { kit[group][$0] } }
            let secret = try SLIP39.combine(chosen, passphrase: phrase)
            let (found, method) = try BackupShareKit.userShare(masterSecret: secret, custodianShares: candidates)
            #expect(found == userShare)
            #expect(method == .iCloud)
            let recovered = try await OfflineRecovery.recover(
                userShare: found, method: method, custodianShares: candidates, custodianKey: custodian, using: random)
            #expect(recovered[0].publicKey == signing[0].publicKey)
            #expect(recovered[0].generation == 1)

            // Too few shares fail; a wrong passphrase gives another secret, which matches no set.
            if chosen.count > 1 {
                #expect(throws: RecoveryKitError.self) {
                    try SLIP39.combine(Array(chosen.dropLast()), passphrase: phrase)
                }
            }
            let wrong = try SLIP39.combine(chosen, passphrase: SecureBytes(copying: Array("wrong".utf8)))
            #expect(wrong != secret)
            #expect(throws: ShareRecoveryError(.noMatchingShare, "")) {
                try BackupShareKit.userShare(masterSecret: wrong, custodianShares: candidates)
            }
        }
    }

    @Test func onlyAUserBackupShareMakesAKit() throws {
        let random = DeterministicRandom(seed: Array("kit refuse".utf8))
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w", using: random)
        #expect(throws: RecoveryKitError.self) { try BackupShareKit.export(signing[0], using: random) }
        #expect(throws: RecoveryKitError.self) {
            try BackupShareKit.userShare(masterSecret: SecureBytes(zeros: 16), custodianShares: [])
        }
    }
}
