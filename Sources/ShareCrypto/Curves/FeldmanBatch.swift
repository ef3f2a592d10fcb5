/// One sub-share a receiver got and the sender's commitments it must match (docs/formats.md §3 step 3,
/// §10 step 3).
package struct SubShareClaim: Sendable {
    /// s_j, what sender j says is its polynomial at the receiver's index.
    package let subShare: Scalar
    /// C_{j,0} … C_{j,t−1}.
    package let commitments: [Point]
    /// Σ_k i^k·C_{j,k} when the caller has already evaluated it (``Shamir/publicShares(indices:commitments:)``).
    package let expected: Point?

    package init(subShare: Scalar, commitments: [Point], expected: Point? = nil) {
        self.subShare = subShare
        self.commitments = commitments
        self.expected = expected
    }
}

/// The Feldman checks of one receiver i over all its senders, `s_j·G == Σ_k i^k·C_{j,k}`, naming the
/// first sender (in the given order) whose check fails, exactly as checking them one by one would.
package enum FeldmanBatch {
    /// How the checks that can hold are decided; both name the same culprit.
    package enum Strategy: Sendable, CaseIterable {
        /// One k·G and one Horner evaluation per sender.
        case perClaim
        /// One combined check with 128-bit random weights r_j (r_0 = 1):
        /// `(Σ r_j·s_j)·G == Σ r_j·E_j`, E_j = Σ_k i^k·C_{j,k}; only when it fails is each sender
        /// checked on its own to name the culprit. A bad claim passes it with probability ≤ 2^-128.
        case combined

        /// What the receivers use. With the C APIs this module has, the combined check's public side
        /// costs one constant-time k·P per sender beyond the first (libsecp256k1 exposes no
        /// multi-scalar multiplication; libsodium's only double-base routine is inside signature
        /// verification), and a k·P costs more than the k·G it saves: 1.5× on secp256k1, 5.5× on
        /// ed25519 (recovery-bench measures both strategies every run; docs/performance.md).
        package static let preferred = Strategy.perClaim
    }

    /// The position of the first claim that fails, or `nil` when every claim holds.
    /// - Parameters:
    ///   - index: i, the receiver's party index.
    ///   - claims: One claim per sender, in the order the caller names them.
    ///   - strategy: ``Strategy/preferred`` in production; tests run both.
    ///   - random: The source of the combined check's weights: the system CSPRNG in production,
    ///     never anything a sender sees or chooses.
    package static func firstFailure(
        index: Int, claims: [SubShareClaim], strategy: Strategy = .preferred,
        using random: some RandomSource = SystemRandom()
    ) -> Int? {
        // Shape failures (another curve, a zero sub-share, commitments with no public share) are
        // exact per claim; the checks before the first of them decide whether an earlier one fails.
        var expected: [Point] = []
        for claim in claims {
            guard let point = expectedPoint(claim, index: index) else { break }
            expected.append(point)
        }
        let firstShapeFailure = expected.count < claims.count ? expected.count : nil
        if strategy == .combined, expected.count > 1,
            combinedHolds(subShares: claims.prefix(expected.count).map(\.subShare), expected: expected, random: random)
        {
            return firstShapeFailure
        }
        let firstMismatch = expected.indices.first { position in
            (try? Point(generatorTimes: claims[position].subShare)) != expected[position]
        }
        return firstMismatch ?? firstShapeFailure
    }

    /// E = Σ_k i^k·C_k, or `nil` when the claim cannot hold whatever the arithmetic says.
    private static func expectedPoint(_ claim: SubShareClaim, index: Int) -> Point? {
        guard let first = claim.commitments.first, claim.subShare.curve == first.curve, !claim.subShare.isZero,
            claim.commitments.allSatisfy({ $0.curve == first.curve })
        else { return nil }
        if let expected = claim.expected, expected.curve == first.curve { return expected }
        return try? Shamir.publicShare(index: index, commitments: claim.commitments)
    }

    /// `(Σ r_j·s_j)·G == E_0 + Σ_{j≥1} r_j·E_j`. The secret side is one constant-time k·G; the
    /// weights multiply public points only.
    private static func combinedHolds(subShares: [Scalar], expected: [Point], random: some RandomSource) -> Bool {
        let curve = expected[0].curve
        var secretSide = subShares[0]
        var publicTerms = [expected[0]]
        for position in 1..<expected.count {
            let weight = randomWeight(on: curve, using: random)
            secretSide = secretSide + weight * subShares[position]
            guard let term = try? expected[position].multiplied(by: weight) else { return false }
            publicTerms.append(term)
        }
        // A failure here (an identity either side) only sends the claims to the one-by-one checks.
        guard let left = try? Point(generatorTimes: secretSide), let right = try? Point.sum(publicTerms) else {
            return false
        }
        return left == right
    }

    /// A uniformly random non-zero 128-bit weight (below both group orders).
    static func randomWeight(on curve: Curve, using random: some RandomSource) -> Scalar {
        while true {
            let bytes = random.bytes(count: 16)
            var value = ScalarField.Limbs(l0: 0, l1: 0, l2: 0, l3: 0)
            for (offset, byte) in bytes.enumerated() {
                if offset < 8 {
                    value.l0 |= UInt64(byte) << (8 * offset)
                } else {
                    value.l1 |= UInt64(byte) << (8 * (offset - 8))
                }
            }
            let weight = Scalar(plain: value, curve: curve)
            if !weight.isZero { return weight }
        }
    }
}
