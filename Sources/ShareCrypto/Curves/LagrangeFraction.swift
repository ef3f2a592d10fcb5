/// `λ_j^Q = Π_{m∈Q, m≠j} m / Π_{m∈Q, m≠j} (m − j)` as a fraction of machine integers, for the
/// resharing checks (docs/formats.md §3 steps 1–2): party indices are small, so λ_j·X is often a small
/// multiple of X (λ_1 = 2 and λ_2 = −1 for Q = {1, 2}) that additions and doublings reach far more
/// cheaply than a full k·P.
package struct LagrangeFraction: Sendable, Equatable {
    /// The signed numerator, in lowest terms.
    package let numerator: Int
    /// The denominator, positive, in lowest terms.
    package let denominator: Int

    /// Beyond this a small multiple costs more additions than one constant-time k·P
    /// (``Point/multiplied(byPublicSmall:)`` switches there too).
    package static let smallLimit = 32

    /// The fraction for party `index` over `indices`; `nil` when a product overflows `Int` (large
    /// sets, where the scalar route is the cheap one anyway) or the indices are not distinct, in
    /// 1…255, with `index` among them.
    package init?(index: Int, indices: [Int]) {
        guard Set(indices).count == indices.count, indices.allSatisfy(Shamir.indexRange.contains),
            indices.contains(index)
        else { return nil }
        var numerator = 1
        var denominator = 1
        for m in indices where m != index {
            let (n, nOverflow) = numerator.multipliedReportingOverflow(by: m)
            let (d, dOverflow) = denominator.multipliedReportingOverflow(by: m - index)
            guard !nOverflow, !dOverflow else { return nil }
            numerator = n
            denominator = d
            // Reduce as we go so that products stay small.
            let divisor = Self.gcd(numerator, denominator)
            numerator /= divisor
            denominator /= divisor
        }
        if denominator < 0 {
            numerator = -numerator
            denominator = -denominator
        }
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Whether both parts are small enough for additions and doublings to beat a k·P.
    package var isSmall: Bool { numerator.magnitude < Self.smallLimit && denominator < Self.smallLimit }

    /// `n·P` for the signed small integer `n` (≠ 0): double-and-add, then a free negation.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for 0.
    package static func multiple(_ point: Point, by n: Int) throws -> Point {
        let magnitude = try point.multiplied(byPublicSmall: UInt64(n.magnitude))
        return n < 0 ? magnitude.negated : magnitude
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (a.magnitude, b.magnitude)
        while y != 0 { (x, y) = (y, x % y) }
        return Int(x)
    }
}
