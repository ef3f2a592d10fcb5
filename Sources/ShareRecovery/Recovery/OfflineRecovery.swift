public import ShareCrypto

/// Recovery with both roles in one process: the holder of the custodian key runs the custodian's
/// half locally (offline recovery, recovery kits, tests). Statuses follow docs/formats.md §8 exactly;
/// after a failure no further status is reported, and nothing is stored.
public enum OfflineRecovery {
    /// Recovers a new signing set.
    /// - Parameters:
    ///   - cipherText: The cipherText text (base64).
    ///   - secret: The secret for its method.
    ///   - custodianShares: The custodian's §6 JSON strings for this client.
    ///   - custodianKey: The custodian's X25519 key pair.
    ///   - store: Persists the new signing set; called between `storingShare` and `done`.
    ///   - progress: Told every status as it begins.
    ///   - random: The random source.
    /// - Returns: The new signing set (generation = backup generation + 1), party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any step; `cancelled` when the task is cancelled.
    public static func recover(
        cipherText: String, secret: BackupSecret, custodianShares: [String], custodianKey: SealingKeyPair,
        store: ([ShareRecord]) throws -> Void = { _ in }, progress: (RecoveryStatus) -> Void = { _ in },
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> [ShareRecord] {
        progress(.readingShare)
        let (envelope, userShare) = try RecoveryPipeline.openUserShare(
            text: cipherText, method: nil, secret: secret, progress: progress)
        return try recover(
            userShare: userShare, method: envelope.method, custodianShares: custodianShares, custodianKey: custodianKey,
            store: store, progress: progress, using: random)
    }

    /// The second half of a recovery, from an already decrypted user backup share (a recovery kit
    /// gives one back). Reports `recoveringSigningShare` through `done`.
    /// - Parameters:
    ///   - userShare: The user backup share, with its secret.
    ///   - method: The backup method of its set.
    ///   - custodianShares: The custodian's §6 JSON strings for this client.
    ///   - custodianKey: The custodian's X25519 key pair.
    ///   - store: Persists the new signing set; called between `storingShare` and `done`.
    ///   - progress: Told every status as it begins.
    ///   - random: The random source.
    /// - Returns: The new signing set, party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any step.
    public static func recover(
        userShare: ShareRecord, method: BackupMethod, custodianShares: [String], custodianKey: SealingKeyPair,
        store: ([ShareRecord]) throws -> Void = { _ in }, progress: (RecoveryStatus) -> Void = { _ in },
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> [ShareRecord] {
        progress(.recoveringSigningShare)
        let selector = CustodianShareSelector(custodianKey: custodianKey)
        let custodian = try selector.select(for: userShare, method: method, candidates: custodianShares).get()
        try checkCancellation()
        progress(.generatingShare)
        guard userShare.generation < UInt32.max else {
            throw ShareRecoveryError(.invalidParameters, "the backup's generation cannot be advanced")
        }
        let newSet = try Resharing.reshare(
            [userShare] + custodian, newThreshold: userShare.threshold, newParties: userShare.parties,
            newKind: .signing, newGeneration: userShare.generation + 1, using: random)
        try checkCancellation()
        let verified = try RecoveryPipeline.verifyNewShares(newSet, from: userShare, progress: progress)
        progress(.storingShare)
        do {
            try store(verified)
        } catch let error as ShareRecoveryError {
            throw error
        } catch {
            throw ShareRecoveryError(.storageFailure, "storing the new signing set failed: \(error)")
        }
        progress(.done)
        return verified
    }

    static func checkCancellation() throws(ShareRecoveryError) { try RecoveryPipeline.checkCancellation() }
}
