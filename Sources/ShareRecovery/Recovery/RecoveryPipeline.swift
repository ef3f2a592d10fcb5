import ShareCrypto

/// The checks of a recovery's docs/formats.md §8 steps that are the device's own, once, for
/// ``RecoveryEngine`` (which ``OfflineRecovery`` drives over a custodian in process): opening the
/// user backup share, and checking the new signing share before it is stored.
///
/// Each step reports its own status as it begins and checks for cancellation when it ends.
enum RecoveryPipeline {
    /// `decryptingShare` → `parsingShare`: parses the cipherText, derives its key from the secret and
    /// decrypts the user backup share. The caller reports `readingShare` before it reads the text.
    /// - Parameters:
    ///   - text: The cipherText (base64).
    ///   - method: The method the caller asked for; `nil` to take the cipherText's own.
    ///   - secret: The secret for the method.
    ///   - progress: Told each status as it begins.
    /// - Returns: The envelope (its method, for selection) and the user backup share.
    /// - Throws: ``ShareRecoveryError``: the cipherText and record codes; `unsupportedMethod` for a
    ///   cipherText of another method than asked; `cancelled`.
    static func openUserShare(
        text: String, method: BackupMethod?, secret: BackupSecret, progress: (RecoveryStatus) -> Void
    )
        throws(ShareRecoveryError) -> (envelope: CipherText, userShare: ShareRecord)
    {
        let envelope = try CipherText(base64: text)
        if let method, envelope.method != method {
            throw ShareRecoveryError(.unsupportedMethod, "the cipherText is a \(envelope.method) backup, not \(method)")
        }
        try checkCancellation()
        progress(.decryptingShare)
        let key = try envelope.deriveKey(secret: secret)
        try checkCancellation()
        progress(.parsingShare)
        let userShare = try envelope.decrypt(key: key)
        try checkCancellation()
        return (envelope, userShare)
    }

    /// The second `parsingShare`: every new signing share round-trips through its stored form, and
    /// keeps the wallet's public key, before anything is stored.
    /// - Parameters:
    ///   - newShares: The new signing share(s).
    ///   - userShare: The user backup share they were reshared from.
    ///   - progress: Told `parsingShare` as the step begins.
    /// - Returns: The shares as read back from their stored form.
    /// - Throws: ``ShareRecoveryError``: `invalidShare` when a stored form describes another share;
    ///   `publicKeyMismatch` when the key changed; `cancelled`.
    static func verifyNewShares(
        _ newShares: [ShareRecord], from userShare: ShareRecord, progress: (RecoveryStatus) -> Void
    )
        throws(ShareRecoveryError) -> [ShareRecord]
    {
        progress(.parsingShare)
        let verified = try newShares.map { (share) throws(ShareRecoveryError) in
            try ShareRecord(binary: try share.binary(), reproducing: share)
        }
        guard verified.allSatisfy({ $0.publicKey == userShare.publicKey && $0.kind == .signing }) else {
            throw ShareRecoveryError(.publicKeyMismatch, "the new signing set has another public key")
        }
        try checkCancellation()
        return verified
    }

    static func checkCancellation() throws(ShareRecoveryError) {
        if Task.isCancelled { throw ShareRecoveryError(.cancelled, "the operation was cancelled") }
    }
}
