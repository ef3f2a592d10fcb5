public import ShareCrypto

/// What the parties of one distributed key generation agree on before it starts (docs/formats.md §10):
/// the curve, the wallet, t and n. Roles follow §2: party 1 is the user's device, party 2 the custodian.
public struct DKGParameters: Sendable, Equatable {
    /// The curve.
    public let curve: Curve
    /// The wallet the new signing set belongs to (1…255 UTF-8 bytes).
    public let walletId: String
    /// t, 2 ≤ t ≤ n.
    public let threshold: Int
    /// n, 2 ≤ n ≤ 255.
    public let parties: Int

    /// Checks the parameters.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a walletId, t or n out of range.
    public init(curve: Curve, walletId: String, threshold: Int, parties: Int) throws(ShareRecoveryError) {
        try ShareRecord.checkRanges(
            walletIdCount: walletId.utf8.count, threshold: threshold, parties: parties, partyIndex: 1)
        self.curve = curve
        self.walletId = walletId
        self.threshold = threshold
        self.parties = parties
    }

    /// Every party index, ascending.
    public var partyIndices: ClosedRange<Int> { 1...parties }

    /// `setId = SHA-256("share-recovery v1 dkg" || curve id || t || n || A_0 || … || A_{t−1})[0..16)`
    /// (docs/formats.md §10), so every party derives the same setId from the public result.
    func setId(commitments: [Point]) -> SetID {
        var preimage = Array("share-recovery v1 dkg".utf8)
        preimage += [curve.rawValue, UInt8(threshold), UInt8(parties)]
        for commitment in commitments { preimage += commitment.rawRepresentation }
        // 16 of 32 digest bytes.
        return try! SetID(bytes: Array(SHA256.hash(preimage).prefix(SetID.count)))
    }
}
