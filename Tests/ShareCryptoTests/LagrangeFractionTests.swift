import ShareCrypto
import Testing

/// λ_j^Q as a fraction of integers must be the scalar λ_j^Q, and its small multiples the scalar
/// multiples: the resharing dealer and receiver rely on both (docs/performance.md).
@Suite("Lagrange coefficients as small fractions")
struct LagrangeFractionTests {
    static let sets: [[Int]] = [
        [1, 2], [1, 3], [2, 3], [1, 2, 3], [2, 4, 5], [1, 2, 3, 4, 5], [7, 200, 255], [3, 9, 27, 81],
    ]

    @Test("numerator / denominator equals lagrangeCoefficientAtZero for every member", arguments: Curve.allCases)
    func matchesScalar(curve: Curve) throws {
        for set in Self.sets {
            for index in set {
                let fraction = try #require(LagrangeFraction(index: index, indices: set))
                #expect(fraction.denominator > 0)
                let magnitude = Scalar(UInt64(fraction.numerator.magnitude), curve: curve)
                let numerator = fraction.numerator < 0 ? magnitude.negated : magnitude
                let value = numerator * (try Scalar(UInt64(fraction.denominator), curve: curve).inverted())
                #expect(
                    value == (try Shamir.lagrangeCoefficientAtZero(index: index, indices: set, curve: curve)),
                    "\(index) in \(set)")
            }
        }
    }

    @Test("Q = {1, 2} gives λ_1 = 2 and λ_2 = −1; Q = {1, …, t} gives integers")
    func knownValues() throws {
        #expect(LagrangeFraction(index: 1, indices: [1, 2]).map { [$0.numerator, $0.denominator] } == [2, 1])
        #expect(LagrangeFraction(index: 2, indices: [1, 2]).map { [$0.numerator, $0.denominator] } == [-1, 1])
        for t in 2...6 {
            for j in 1...t {
                #expect(LagrangeFraction(index: j, indices: Array(1...t))?.denominator == 1, "λ_\(j) of 1…\(t)")
            }
        }
        #expect(LagrangeFraction(index: 3, indices: [1, 2]) == nil)
        #expect(LagrangeFraction(index: 1, indices: [1, 1, 2]) == nil)
    }

    @Test("signed small multiples equal full scalar multiplications", arguments: Curve.allCases)
    func smallMultiples(curve: Curve) throws {
        let point = try Point(generatorTimes: Scalar(12345, curve: curve))
        for n in [-31, -3, -2, -1, 1, 2, 3, 17, 31, 32, 200] {
            let scalar = n < 0 ? Scalar(UInt64(-n), curve: curve).negated : Scalar(UInt64(n), curve: curve)
            #expect(try LagrangeFraction.multiple(point, by: n) == (try point.multiplied(by: scalar)), "n = \(n)")
        }
        #expect(throws: ShareCryptoError.self) { try LagrangeFraction.multiple(point, by: 0) }
    }
}
