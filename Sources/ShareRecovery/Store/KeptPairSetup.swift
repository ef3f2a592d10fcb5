public import ShareCrypto

/// A device's ECDSA pair setup with the custodian, kept at rest between runs (docs/ecdsa.md "Kept
/// between runs"): in its store (``FileSigningShareStore/keptPairSetup()``) or in a file beside its
/// share file.
///
/// The setup is sealed (XChaCha20-Poly1305) under a key that HKDF-SHA256 derives from the share's
/// secret, with the share's wallet, set, generation and party in the info and the associated data.
/// So it opens only with the very share it was made for: a recovery or a refresh, whose new share
/// has another secret, set and generation, finds its old setup unreadable and makes a fresh one,
/// and a copied setup file is worthless without the share.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic `SRKP` |
/// | 4 | 1 | version 1 |
/// | 5 | 24 | nonce |
/// | 29 | rest | XChaCha20-Poly1305 of the setup's ``PairSetup/rawRepresentation()``, tag last |
public enum KeptPairSetup {
    static let magic: [UInt8] = Array("SRKP".utf8)
    static let version: UInt8 = 1
    static let headerCount = 5 + XChaCha20Poly1305.nonceCount
    /// The largest sealed setup a reader accepts (the setup is 24 619 bytes).
    package static let maximumCount = 32 * 1024

    /// Seals a setup for the share it was made with.
    /// - Parameters:
    ///   - setup: The device's setup, not discarded.
    ///   - share: The device's signing share (with its secret) the setup was made with.
    ///   - random: The nonce's source.
    /// - Returns: The sealed bytes to keep (secret-free, but keep them private like the share).
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a share without its secret or a
    ///   setup made for another share; ``ShareRecoveryError/Code/ecdsaCheckFailed`` for a discarded setup.
    public static func seal(_ setup: PairSetup, share: ShareRecord, random: any RandomSource = SystemRandom())
        throws(ShareRecoveryError) -> [UInt8]
    {
        guard setup.isMade(for: share) else {
            throw ShareRecoveryError(
                .invalidParameters, "this pair setup was made for another share set or generation than this share")
        }
        let header = magic + [version] + random.bytes(count: XChaCha20Poly1305.nonceCount)
        let key = try sealingKey(share)
        let sealed = try mappingCryptoErrors {
            try XChaCha20Poly1305.seal(
                try setup.rawRepresentation(), key: key, nonce: Array(header[5...]), aad: header + binding(share))
        }
        return header + sealed
    }

    /// Opens a kept setup with the share it must belong to.
    /// - Returns: The setup, or nil when the bytes were sealed for another share, set or generation
    ///   (a recovery or refresh came since), or are damaged: either way, make a fresh setup.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a share without its secret.
    public static func open(_ bytes: [UInt8], share: ShareRecord) throws(ShareRecoveryError) -> PairSetup? {
        let key = try sealingKey(share)
        guard bytes.count > headerCount + XChaCha20Poly1305.tagCount, bytes.count <= maximumCount,
            Array(bytes[0..<4]) == magic, bytes[4] == version,
            let raw = try? XChaCha20Poly1305.open(
                Array(bytes[headerCount...]), key: key, nonce: Array(bytes[5..<headerCount]),
                aad: Array(bytes[0..<headerCount]) + binding(share)),
            let setup = try? PairSetup(rawRepresentation: raw), setup.isMade(for: share)
        else { return nil }
        return setup
    }

    /// `walletId (UTF-8) || 0x00 || setId (16) || generation (4, big-endian) || party (1)`.
    private static func binding(_ share: ShareRecord) -> [UInt8] {
        Array(share.walletId.utf8) + [0] + share.setId.bytes + StoreLayout.bytes(share.generation)
            + [UInt8(share.partyIndex)]
    }

    private static func sealingKey(_ share: ShareRecord) throws(ShareRecoveryError) -> SecureBytes {
        guard let secret = share.secret else {
            throw ShareRecoveryError(
                .invalidParameters, "a pair setup is kept with the share's secret; give the share file with it")
        }
        return try mappingCryptoErrors {
            try HKDF.deriveKey(
                inputKeyMaterial: secret.rawRepresentation, salt: [UInt8](),
                info: Array("share-recovery kept ECDSA pair setup v1".utf8) + binding(share),
                outputCount: XChaCha20Poly1305.keyCount)
        }
    }
}
