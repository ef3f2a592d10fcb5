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
