import ShareCrypto
import Testing

@Suite("Lagrange interpolation at zero")
struct LagrangeTests {
    @Test("2-of-2 gives λ_1 = 2 and λ_2 = −1 (docs/formats.md §2)", arguments: Curve.allCases)
    func twoOfTwo(curve: Curve) throws {
        let lambda1 = try Shamir.lagrangeCoefficientAtZero(index: 1, indices: [1, 2], curve: curve)
        let lambda2 = try Shamir.lagrangeCoefficientAtZero(index: 2, indices: [1, 2], curve: curve)
        #expect(lambda1 == Scalar(2, curve: curve))
        #expect(lambda2 == Scalar(1, curve: curve).negated)
        // Order of the index set does not matter.
        #expect(try Shamir.lagrangeCoefficientAtZero(index: 1, indices: [2, 1], curve: curve) == lambda1)
    }

    /// Index sets of size t drawn from 1…255, including the extremes.
    static let subsets: [[Int]] = [
        [1, 2], [2, 1], [1, 3], [2, 5], [7, 255], [254, 255],
        [1, 2, 3], [1, 3, 5], [2, 4, 200], [3, 2, 1], [9, 100, 255], [253, 254, 255],
    ]

    @Test("t shares of a random polynomial reconstruct f(0)", arguments: Curve.allCases, subsets)
    func reconstruction(curve: Curve, indices: [Int]) throws {
        let random = DeterministicRandom(seed: Array("lagrange \(curve) \(indices)".utf8))
        for _ in 0..<5 {
            let secret = Scalar.random(on: curve, using: random)
            let polynomial = Polynomial.random(constant: secret, degree: indices.count - 1, using: random)
            var sum = Scalar(0, curve: curve)
            var commitmentTerms: [(Scalar, Point)] = []
            let commitments = try polynomial.commitments()
            for index in indices {
                let lambda = try Shamir.lagrangeCoefficientAtZero(index: index, indices: indices, curve: curve)
                let share = polynomial.evaluate(atIndex: index)
                sum = sum + lambda * share
                commitmentTerms.append((lambda, try Shamir.publicShare(index: index, commitments: commitments)))
            }
            #expect(sum == secret)
            // The same combination over public shares gives the public key, as resharing checks.
            #expect(try Point.linearCombination(commitmentTerms) == Point(generatorTimes: secret))
        }
    }

    @Test("t − 1 shares do not reconstruct f(0)", arguments: Curve.allCases)
    func tooFewShares(curve: Curve) throws {
        let random = DeterministicRandom(seed: Array("too few \(curve)".utf8))
        let secret = Scalar.random(on: curve, using: random)
        let polynomial = Polynomial.random(constant: secret, degree: 2, using: random)
        let indices = [1, 2]
        var sum = Scalar(0, curve: curve)
        for index in indices {
            sum =
                sum + (try Shamir.lagrangeCoefficientAtZero(index: index, indices: indices, curve: curve))
                * polynomial.evaluate(atIndex: index)
        }
        #expect(sum != secret)
    }

    @Test(
        "duplicate, out-of-range or missing indices are invalid parameters",
        arguments: Curve.allCases,
        [(1, [1, 1]), (2, [1, 2, 2]), (1, [1, 2, 1]), (0, [0, 1]), (1, [1, 256]), (3, [1, 2]), (1, [1, -1])]
            as [(index: Int, indices: [Int])])
    func invalidIndexSets(curve: Curve, input: (index: Int, indices: [Int])) {
        #expect(throws: ShareCryptoError(.invalidParameters, "")) {
            try Shamir.lagrangeCoefficientAtZero(index: input.index, indices: input.indices, curve: curve)
        }
    }
}
