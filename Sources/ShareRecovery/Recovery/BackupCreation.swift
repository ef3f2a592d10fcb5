public import ShareCrypto

/// What a backup produces: the user's cipherText and the custodian's sealed backup share(s).
public struct BackupResult: Sendable {
    /// The encrypted user backup share (party 1 of the backup set).
    public let cipherText: CipherText
    /// The custodian backup shares (parties 2…n of the backup set), sealed to the custodian key.
    public let custodianShares: [CustodianBackupShare]
    /// Public descriptions of every share of the new backup set.
    public let backupSet: [ShareRecord]
}

/// Backup creation (docs/formats.md §3): reshare the signing set into a new backup set for one method.
public enum BackupCreation {
    /// Creates a backup from t signing shares.
    /// - Parameters:
    ///   - signingShares: t shares of the current signing set, with secrets.
    ///   - method: The backup method.
    ///   - secret: The password/recovery code or 32-byte key material.
    ///   - custodianPublicKey: The custodian's X25519 public key.
    ///   - argon2: Argon2id parameters for the password methods.
    ///   - keyId: Which cloud key object or passkey credential.
    ///   - createdAt: Timestamp for the custodian shares; now when `nil`.
    ///   - random: The random source.
    /// - Throws: ``ShareRecoveryError`` when the shares are not t signing shares of one set, or as
    ///   resharing, encryption and sealing do.
    public static func create(
        signingShares: [ShareRecord], method: BackupMethod, secret: BackupSecret, custodianPublicKey: [UInt8],
        argon2: Argon2idParameters = .default, keyId: String = "", createdAt: String? = nil,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> BackupResult {
        guard let first = signingShares.first, first.kind == .signing, signingShares.count == first.threshold else {
            throw ShareRecoveryError(.invalidParameters, "a backup needs exactly t signing shares of one set")
        }
        let backupSet = try Resharing.reshare(
            signingShares, newThreshold: first.threshold, newParties: first.parties, newKind: .backup,
            newGeneration: first.generation, using: random)
        // Party 1 is the user's; parties 2…n stay with the custodian (docs/formats.md §2 roles).
        let cipherText = try CipherText.encrypt(
            backupSet[0], method: method, secret: secret, argon2: argon2, keyId: keyId, using: random)
        let custodianShares = try backupSet.dropFirst().map { (share) throws(ShareRecoveryError) in
            try CustodianBackupShare(
                sealing: share, method: method, custodianPublicKey: custodianPublicKey, createdAt: createdAt,
                using: random)
        }
        return BackupResult(
            cipherText: cipherText, custodianShares: custodianShares, backupSet: backupSet.map(\.publicDescription))
    }
}
