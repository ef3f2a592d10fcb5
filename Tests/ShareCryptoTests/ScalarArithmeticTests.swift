import Testing
@testable import ShareCrypto

@Suite("Scalar arithmetic")
struct ScalarArithmeticTests {
    static let random = DeterministicRandom(seed: Array("scalar-arithmetic".utf8))

    @Test(arguments: Curve.allCases)
    func homomorphism(curve: Curve) throws {
        // (a+b)·G == a·G + b·G, (a·b)·G == b·(a·G), a·a⁻¹ == 1, a − a == 0.
        for _ in 0..<50 {
            let a = Scalar.random(on: curve, using: Self.random)
            let b = Scalar.random(on: curve, using: Self.random)
            #expect(try Point(generatorTimes: a + b) == (try Point(generatorTimes: a) + Point(generatorTimes: b)))
            #expect(try Point(generatorTimes: a * b) == (try Point(generatorTimes: a).multiplied(by: b)))
            #expect(try a * a.inverted() == Scalar(1, curve: curve))
            #expect((a - a).isZero)
            #expect((a + a.negated).isZero)
            #expect(try Point(generatorTimes: a - b) + Point(generatorTimes: b) == Point(generatorTimes: a))
        }
    }

    @Test(arguments: Curve.allCases)
    func orderMinusOneIsMinusOne(curve: Curve) throws {
        let minusOne = Scalar(1, curve: curve).negated
        #expect(minusOne + Scalar(1, curve: curve) == Scalar(0, curve: curve))
        #expect(minusOne * minusOne == Scalar(1, curve: curve))
        // order itself is not canonical
        var orderBytes = minusOne.rawRepresentation.revealedBytes()
        let last = curve == .secp256k1 ? 31 : 0
        orderBytes[last] += 1
        #expect(throws: ShareCryptoError(.invalidScalar, "")) {
            try Scalar(rawRepresentation: orderBytes, curve: curve)
        }
    }
}

@Suite("Scalar field reductions")
struct ScalarFieldReductionTests {
    static let random = DeterministicRandom(seed: Array("scalar-field-reductions".utf8))

    static func limbs(_ bytes: [UInt8]) -> ScalarField.Limbs {
        bytes.withUnsafeBytes { ScalarField.Limbs(bigEndian: $0) }
    }

    /// Random words, and the extremes where carries run furthest: all ones, the modulus and around it.
    static func samples(_ field: ScalarField) -> [ScalarField.Limbs] {
        let ones = ScalarField.Limbs(l0: .max, l1: .max, l2: .max, l3: .max)
        let below = ScalarField.subtract(field.modulus, .one).difference
        return [.zero, .one, ones, field.modulus, below] + (0..<40).map { _ in limbs(random.bytes(count: 32)) }
    }

    @Test("reduceWidePlain's fold of a 128-bit high half agrees with the Montgomery reduction")
    func foldAgreesWithMontgomery() {
        let field = Curve.secp256k1.field
        let highs = Self.samples(field).map { ScalarField.Limbs(l0: $0.l0, l1: $0.l1, l2: 0, l3: 0) }
        for low in Self.samples(field) {
            for high in highs {
                let expected = field.fromMontgomery(field.reduceWide(low: low, high: high))
                #expect(field.reduceWidePlain(low: low, high: high) == expected)
            }
        }
    }

    @Test("a ProductSum reduces to the sum of modular products, on both curves", arguments: Curve.allCases)
    func productSumAgreesWithModularProducts(curve: Curve) {
        let field = curve.field
        // Unreduced factors (all ones among them) for the sum, the same reduced for the expectation:
        // mont(a·R, b) = a·b, plain.
        let factors = Self.samples(field)
        let reduced = factors.map { field.fromMontgomery(field.toMontgomery($0)) }
        var sum = ScalarField.ProductSum()
        var expected = ScalarField.Limbs.zero
        // Every pair, so all ones times all ones is among the terms and the top word collects carries.
        for (a, reducedA) in zip(factors, reduced) {
            for (b, reducedB) in zip(factors, reduced) {
                sum.add(a, times: b)
                expected = field.add(expected, field.multiply(field.toMontgomery(reducedA), reducedB))
            }
        }
        #expect(sum.reduced(in: field) == expected)
        #expect(sum.reduced(in: field) == .zero)
    }
}
