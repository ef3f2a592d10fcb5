import ShareCrypto
import ShareRecovery

/// Valid inputs built with ShareRecovery directly.
enum Fixtures {
    /// A backup set of `parties` shares resharing a fresh signing set (party 1 first).
    static func backupSet(curve: Curve = .secp256k1, walletId: String = "w-fixture", parties: Int = 3) throws
        -> [ShareRecord]
    {
        let signing = try KeyGeneration.generate(curve: curve, walletId: walletId, threshold: 2, parties: parties)
        return try Resharing.reshare(
            Array(signing.prefix(2)), newThreshold: 2, newParties: parties, newKind: .backup, newGeneration: 0)
    }

    /// §6 JSON texts of parties 2…n of a fresh backup set, sealed to `custodianKey`.
    static func custodianShares(
        custodianKey: [UInt8], method: BackupMethod = .password, curve: Curve = .secp256k1, parties: Int = 3
    ) throws -> [String] {
        try backupSet(curve: curve, parties: parties).dropFirst().map {
            try CustodianBackupShare(sealing: $0, method: method, custodianPublicKey: custodianKey).json
        }
    }

    /// A cipherText text of `method` (hkdf methods with zero key material, password methods with minimum Argon2id).
    static func cipherText(method: BackupMethod = .password) throws -> String {
        let record = try backupSet(parties: 2)[0]
        let secret: BackupSecret =
            method.kdf == .argon2id13 ? .text("fixture secret") : .keyMaterial(SecureBytes(zeros: 32))
        return try CipherText.encrypt(record, method: method, secret: secret, argon2: .minimum).base64
    }

    /// Any 32-byte X25519 public key.
    static var anyKey: [UInt8] { SealingKeyPair().publicKey }
}
