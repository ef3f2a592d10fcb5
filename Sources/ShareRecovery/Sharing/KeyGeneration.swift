public import ShareCrypto

/// A trusted dealer for development, demos and tests: creates a fresh t-of-n signing set.
///
/// Production wallets get their signing set from a distributed key generation; this dealer sees
/// the whole key once, at creation, and forgets it (the polynomial's scalars are wiped on release).
public enum KeyGeneration {
    /// Creates a generation-0 signing set.
    /// - Parameters:
    ///   - curve: The curve.
    ///   - walletId: 1…255 UTF-8 bytes.
    ///   - threshold: t (default 2).
    ///   - parties: n (default 2).
    ///   - random: The random source.
    /// - Returns: n signing share records, party 1 first.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for bad t, n or walletId.
    public static func generate(
        curve: Curve, walletId: String, threshold: Int = 2, parties: Int = 2,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> [ShareRecord] {
        try ShareRecord.checkRanges(
            walletIdCount: walletId.utf8.count, threshold: threshold, parties: parties, partyIndex: 1)
        let polynomial = Polynomial.random(
            constant: Scalar.random(on: curve, using: random), degree: threshold - 1, using: random)
        let commitments = try mappingCryptoErrors { try polynomial.commitments() }
        let setId = SetID.random(using: random)
        return try (1...parties).map { (index) throws(ShareRecoveryError) in
            try ShareRecord(
                walletId: walletId, curve: curve, kind: .signing, threshold: threshold, parties: parties,
                partyIndex: index, generation: 0, setId: setId, secret: polynomial.evaluate(atIndex: index),
                commitments: commitments)
        }
    }
}
