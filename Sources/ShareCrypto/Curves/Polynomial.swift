/// Shamir and Feldman helpers over a curve's scalar field (docs/formats.md §2).
public struct Polynomial: Sendable {
    /// Coefficients a_0 … a_{t−1}; a_0 is the shared secret.
    public let coefficients: [Scalar]

    /// Creates a polynomial from explicit coefficients (vectors, tests).
    /// - Parameter coefficients: At least one coefficient, all on one curve.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` when empty or mixed curves.
    public init(coefficients: [Scalar]) throws {
        guard let first = coefficients.first, coefficients.allSatisfy({ $0.curve == first.curve }) else {
            throw ShareCryptoError(.invalidParameters, "a polynomial needs one or more coefficients on one curve")
        }
        self.coefficients = coefficients
    }

    /// A random polynomial of the given degree with a fixed constant term.
    /// - Parameters:
    ///   - constant: a_0.
    ///   - degree: t − 1, at least 0.
    ///   - random: Source of the other coefficients.
    public static func random(
        constant: Scalar, degree: Int, using random: some RandomSource = SystemRandom()
    ) -> Polynomial {
        let rest = (0..<max(degree, 0)).map { _ in Scalar.random(on: constant.curve, using: random) }
        // Non-empty and single-curve by construction.
        return try! Polynomial(coefficients: [constant] + rest)
    }

    /// The curve.
    public var curve: Curve { coefficients[0].curve }

    /// f(x) by Horner's rule.
    public func evaluate(at x: Scalar) -> Scalar {
        var result = coefficients[coefficients.count - 1]
        for coefficient in coefficients.dropLast().reversed() { result = result * x + coefficient }
        return result
    }

    /// f(i) for a party index.
    public func evaluate(atIndex index: Int) -> Scalar { evaluate(at: Scalar(UInt64(index), curve: curve)) }

    /// Feldman commitments `a_k·G`.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` when a coefficient is zero (its commitment
    ///   would be the identity, which no valid set may carry).
    public func commitments() throws -> [Point] {
        try coefficients.map { try Point(generatorTimes: $0) }
    }
}

/// Feldman and Lagrange helpers.
public enum Shamir {
    /// Party indices are 1 through 255 (docs/formats.md §1).
    public static let indexRange = 1...255

    /// The Feldman check of a sub-share a party received: `s·G == Σ_k i^k·C_k` (docs/formats.md §3 step 3,
    /// §10 step 3). A zero sub-share, one of another curve, or commitments that do not give a public
    /// share all fail it.
    /// - Parameters:
    ///   - subShare: s, what the sender says is its polynomial at `index`.
    ///   - index: The receiving party's index.
    ///   - commitments: The sender's commitments C_0 … C_{t−1}.
    public static func subShareMatches(_ subShare: Scalar, index: Int, commitments: [Point]) -> Bool {
        FeldmanBatch.firstFailure(index: index, claims: [SubShareClaim(subShare: subShare, commitments: commitments)])
            == nil
    }

    /// `X_i = Σ_k i^k · A_k`: the public share of party `index`.
    /// - Parameters:
    ///   - index: The party index, 1…255.
    ///   - commitments: A_0 … A_{t−1}.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for a bad index or no commitments,
    ///   ``ShareCryptoError/Code/invalidPoint`` when the sum is the identity.
    public static func publicShare(index: Int, commitments: [Point]) throws -> Point {
        guard indexRange.contains(index), let first = commitments.first else {
            throw ShareCryptoError(.invalidParameters, "party index \(index) or empty commitments")
        }
        // Horner's rule with a small public multiplier: X = (…(A_{t−1}·i + A_{t−2})·i + …)·i + A_0.
        do {
            var result = commitments[commitments.count - 1]
            for commitment in commitments.dropLast().reversed() {
                result = try Point.sum([try result.multiplied(byPublicSmall: UInt64(index)), commitment])
            }
            return result
        } catch {
            // An intermediate identity (only from crafted commitments) is not an identity result:
            // recompute as Σ i^k·A_k, which throws only if X_i itself is the identity.
            let i = Scalar(UInt64(index), curve: first.curve)
            var power = Scalar(1, curve: first.curve)
            var terms: [(Scalar, Point)] = []
            for commitment in commitments {
                terms.append((power, commitment))
                power = power * i
            }
            return try Point.linearCombination(terms)
        }
    }

    /// `λ_j^Q = Π_{m∈Q, m≠j} m·(m−j)⁻¹` at zero.
    /// - Parameters:
    ///   - index: j, a member of `indices`.
    ///   - indices: Q, distinct indices in 1…255.
    ///   - curve: The curve.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for duplicates, out-of-range indices,
    ///   or `index` not in `indices`.
    public static func lagrangeCoefficientAtZero(index: Int, indices: [Int], curve: Curve) throws -> Scalar {
        guard Set(indices).count == indices.count, indices.allSatisfy(indexRange.contains), indices.contains(index)
        else {
            throw ShareCryptoError(
                .invalidParameters, "Lagrange indices must be distinct, in 1…255, and include \(index)")
        }
        let j = Scalar(UInt64(index), curve: curve)
        var numerator = Scalar(1, curve: curve)
        var denominator = Scalar(1, curve: curve)
        for m in indices where m != index {
            let mScalar = Scalar(UInt64(m), curve: curve)
            numerator = numerator * mScalar
            denominator = denominator * (mScalar - j)
        }
        return numerator * (try denominator.inverted())
    }
}
