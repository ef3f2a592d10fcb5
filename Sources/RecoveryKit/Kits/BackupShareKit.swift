public import ShareCrypto
public import ShareRecovery

/// Paper recovery kits for MPC backup shares: the user backup share's 32-byte scalar as SLIP-39
/// mnemonics. Everything else in the record (wallet, set, commitments) is public and comes back with
/// the custodian backup shares, so a kit stays as short as a 32-byte SLIP-39 secret (33 words).
///
/// A kit belongs to one backup set: the user backup share is always party 1 (docs/formats.md §2 roles),
/// and recovery finds the set among the custodian's shares as the one whose commitments give
/// `X_1 == secret·G`.
public enum BackupShareKit {
    /// The keyId of a lifecycle kit's `recoveryCode` cipherText (`RecoveryEngine.createRecoveryKit(groupThreshold:groups:passphrase:)`).
    public static let lifecycleKeyId = CipherText.recoveryKitKeyId

    /// A lifecycle kit's recovery code: the 32-byte master secret as 64 lowercase hex digits, the
    /// text a `recoveryCode` cipherText's Argon2id key is derived from (docs/formats.md §5).
    /// - Throws: ``RecoveryKitError/Code/invalidKitShare`` for a secret that is not 32 bytes.
    public static func recoveryCode(masterSecret: SecureBytes) throws -> BackupSecret {
        guard masterSecret.count == Curve.scalarCount else {
            throw RecoveryKitError(
                .invalidKitShare, "a kit's secret is a 32-byte scalar, got \(masterSecret.count) bytes")
        }
        return try BackupSecret.text(utf8: Hex.encodeSecret(masterSecret))
    }

    /// Writes a user backup share as SLIP-39 shares.
    /// - Parameters:
    ///   - share: The user backup share (party 1 of a backup set), with its secret.
    ///   - groupThreshold: How many groups recover the kit.
    ///   - groups: The groups (e.g. one 1-of-1 group, or one 2-of-3 group).
    ///   - passphrase: Optional SLIP-39 passphrase (printable ASCII).
    ///   - random: The random source.
    /// - Returns: One array of shares per group.
    /// - Throws: ``RecoveryKitError`` for bad layouts; `invalidKitShare` when the share is not party 1 of a backup set.
    public static func export(
        _ share: ShareRecord, groupThreshold: Int = 1,
        groups: [SLIP39.Group] = [SLIP39.Group(memberThreshold: 1, memberCount: 1)],
        passphrase: SecureBytes = SecureBytes(zeros: 0), using random: some RandomSource = SystemRandom()
    ) throws -> [[SLIP39.Share]] {
        guard let secret = share.secret, share.kind == .backup, share.partyIndex == 1 else {
            throw RecoveryKitError(.invalidKitShare, "a kit holds the user backup share (party 1 of a backup set)")
        }
        return try SLIP39.generateShares(
            masterSecret: secret.rawRepresentation, groupThreshold: groupThreshold, groups: groups,
            passphrase: passphrase,
            using: random)
    }

    /// Rebuilds the user backup share from a kit's master secret and the custodian's backup shares.
    /// - Parameters:
    ///   - masterSecret: The 32-byte scalar SLIP-39 gave back.
    ///   - custodianShares: The §6 JSON strings for this client.
    /// - Returns: The user backup share and the backup method of its set.
    /// - Throws: ``RecoveryKitError/Code/invalidKitShare`` for a secret of the wrong size;
    ///   `ShareRecoveryError` `noMatchingShare` when no candidate set has `X_1 == secret·G`.
    public static func userShare(masterSecret: SecureBytes, custodianShares: [String]) throws -> (
        ShareRecord, BackupMethod
    ) {
        guard masterSecret.count == Curve.scalarCount else {
            throw RecoveryKitError(
                .invalidKitShare, "a kit's secret is a 32-byte scalar, got \(masterSecret.count) bytes")
        }
        var tried = Set<String>()
        for text in custodianShares {
            guard let candidate = try? CustodianBackupShare(json: text) else { continue }
            let key = "\(candidate.walletId)/\(candidate.curve)/\(candidate.setId)"
            guard tried.insert(key).inserted,
                let secret = try? Scalar(secret: masterSecret, curve: candidate.curve),
                let commitments = try? candidate.commitments.map({
                    try Point(rawRepresentation: $0, curve: candidate.curve)
                }),
                let record = try? ShareRecord(
                    walletId: candidate.walletId, curve: candidate.curve, kind: .backup, threshold: candidate.threshold,
                    parties: candidate.parties, partyIndex: 1, generation: candidate.generation, setId: candidate.setId,
                    secret: secret, commitments: commitments)
            else { continue }
            // The record's initialiser checked x_1·G == X_1: this is the kit's set.
            return (record, candidate.backupMethod)
        }
        throw ShareRecoveryError(
            .noMatchingShare, "no custodian share belongs to a set whose party 1 holds this kit's secret")
    }
}
