import Foundation
import ShareCrypto
import Testing

/// Random honest and dishonest senders fed to ``FeldmanBatch``: whichever strategy decides, the
/// culprit named must be the first claim that a plain, independent check refuses. Every case is
/// recomputed from the seed, printed on every run and in each failure message
/// (`FELDMAN_BATCH_SEED=<seed>` reruns that run).
@Suite("Batched Feldman checks name the right culprit")
struct BatchedFeldmanTests {
    static let seed = ProcessInfo.processInfo.environment["FELDMAN_BATCH_SEED"].flatMap(UInt64.init) ?? 0x5EED_0017
    static let casesPerCurve = 1_200

    /// The ways a sender can lie.
    enum Corruption: CaseIterable {
        case shiftedSubShare, replacedCommitment, zeroSubShare, noCommitments, otherCurveSubShare
        /// The next claim's error cancels this one's in an unweighted sum.
        case offsetByNext
    }

    @Test(
        "thousands of random claim lists: the batch names the first claim a one-by-one check refuses",
        arguments: Curve.allCases)
    func culpritIsTheFirstFailure(curve: Curve) throws {
        print(
            "BatchedFeldmanTests: \(curve), \(Self.casesPerCurve) cases, seed \(Self.seed) (FELDMAN_BATCH_SEED replays it)"
        )
        var corruptedCases = 0
        for number in 0..<Self.casesPerCurve {
            let label = "seed \(Self.seed), \(curve) case \(number)"
            let random = DeterministicRandom(seed: Array(label.utf8))
            let (index, claims, corrupted) = try Self.makeCase(curve: curve, random: random)
            let expected = claims.indices.first { !Self.referenceHolds(claims[$0], index: index) }
            // A designed corruption is a failure by construction: the reference must agree.
            if let first = corrupted.min() {
                corruptedCases += 1
                #expect(expected != nil && expected! <= first, "\(label): reference accepted corrupted claim \(first)")
            }
            for strategy in FeldmanBatch.Strategy.allCases {
                let named = FeldmanBatch.firstFailure(index: index, claims: claims, strategy: strategy, using: random)
                #expect(
                    named == expected,
                    "\(label), \(strategy): named \(String(describing: named)), expected \(String(describing: expected))"
                )
            }
        }
        // The generator must produce both outcomes in quantity, or the test proves little.
        #expect(
            corruptedCases > Self.casesPerCurve / 3 && corruptedCases < Self.casesPerCurve * 9 / 10, "seed \(Self.seed)"
        )
    }

    @Test(
        "errors that cancel in an unweighted sum still fail the combined check, at the first sender",
        arguments: Curve.allCases)
    func offsettingErrors(curve: Curve) throws {
        let random = DeterministicRandom(seed: Array("offsetting \(curve) \(Self.seed)".utf8))
        let polynomials = try (0..<3).map { _ in try Self.polynomial(curve: curve, degree: 1, random: random) }
        let delta = Scalar.random(on: curve, using: random)
        var claims = try polynomials.map {
            SubShareClaim(subShare: $0.evaluate(atIndex: 2), commitments: try $0.commitments())
        }
        claims[1] = SubShareClaim(subShare: claims[1].subShare + delta, commitments: claims[1].commitments)
        claims[2] = SubShareClaim(subShare: claims[2].subShare - delta, commitments: claims[2].commitments)
        for strategy in FeldmanBatch.Strategy.allCases {
            #expect(
                FeldmanBatch.firstFailure(index: 2, claims: claims, strategy: strategy, using: random) == 1,
                "\(strategy)")
        }
    }

    @Test(
        "honest claims pass both strategies, and Shamir.subShareMatches agrees with the batch",
        arguments: Curve.allCases)
    func honestClaimsPass(curve: Curve) throws {
        let random = DeterministicRandom(seed: Array("honest \(curve) \(Self.seed)".utf8))
        for index in [1, 2, 3, 31, 32, 255] {
            let polynomials = try (0..<4).map { _ in try Self.polynomial(curve: curve, degree: 2, random: random) }
            let claims = try polynomials.map {
                SubShareClaim(subShare: $0.evaluate(atIndex: index), commitments: try $0.commitments())
            }
            for strategy in FeldmanBatch.Strategy.allCases {
                #expect(
                    FeldmanBatch.firstFailure(index: index, claims: claims, strategy: strategy, using: random) == nil)
            }
            #expect(
                claims.allSatisfy { Shamir.subShareMatches($0.subShare, index: index, commitments: $0.commitments) })
            #expect(
                !Shamir.subShareMatches(
                    claims[0].subShare, index: index + (index == 255 ? -1 : 1), commitments: claims[0].commitments))
        }
    }

    @Test(
        "public shares for many receivers, stepped or not, equal one Horner evaluation each", arguments: Curve.allCases)
    func publicSharesForManyReceivers(curve: Curve) throws {
        let random = DeterministicRandom(seed: Array("public shares \(curve) \(Self.seed)".utf8))
        for degree in 0...3 {
            let commitments = try Self.polynomial(curve: curve, degree: degree, random: random).commitments()
            for indices in [[1, 2, 3, 4, 5], [2, 3], [5, 4, 3], [1, 3, 4, 9], [254, 255], [255]] {
                let shares = Shamir.publicShares(indices: indices, commitments: commitments)
                #expect(
                    shares == indices.map { try? Shamir.publicShare(index: $0, commitments: commitments) },
                    "degree \(degree), \(indices)")
            }
        }
        // X_2 = A_0 + 2·A_1 is the identity when A_0 = −2·A_1: no point, stepped or not.
        let a1 = try Point(generatorTimes: Scalar.random(on: curve, using: random))
        let crafted = [try a1.multiplied(byPublicSmall: 2).negated, a1]
        #expect(
            Shamir.publicShares(indices: [1, 2, 3], commitments: crafted).map { $0 == nil } == [false, true, false])
    }

    // MARK: Generation

    static func polynomial(curve: Curve, degree: Int, random: some RandomSource) throws -> Polynomial {
        Polynomial.random(constant: Scalar.random(on: curve, using: random), degree: degree, using: random)
    }

    /// A receiver index, 1–6 claims of one random threshold, and which claims were corrupted.
    static func makeCase(curve: Curve, random: some RandomSource) throws -> (Int, [SubShareClaim], [Int]) {
        let draw = random.bytes(count: 4)
        let index = Int(draw[0] % 8) + 1 + (draw[1] % 16 == 0 ? 200 : 0)
        let count = Int(draw[2] % 6) + 1
        let degree = Int(draw[3] % 4)
        var claims = try (0..<count).map { _ in
            let drawn = try Self.polynomial(curve: curve, degree: degree, random: random)
            return SubShareClaim(subShare: drawn.evaluate(atIndex: index), commitments: try drawn.commitments())
        }
        var corrupted: [Int] = []
        for position in claims.indices where random.bytes(count: 1)[0] % 4 == 0 {
            let kinds = Corruption.allCases
            let kind = kinds[Int(random.bytes(count: 1)[0]) % kinds.count]
            if try corrupt(&claims, at: position, kind: kind, random: random) {
                corrupted.append(position)
            }
        }
        return (index, claims, corrupted)
    }

    /// Applies one corruption; returns whether it is sure to make the claim fail.
    static func corrupt(
        _ claims: inout [SubShareClaim], at position: Int, kind: Corruption, random: some RandomSource
    ) throws -> Bool {
        let claim = claims[position]
        let curve = claim.subShare.curve
        switch kind {
        case .shiftedSubShare:
            claims[position] = SubShareClaim(
                subShare: claim.subShare + Scalar.random(on: curve, using: random), commitments: claim.commitments)
        case .replacedCommitment:
            var commitments = claim.commitments
            let slot = Int(random.bytes(count: 1)[0]) % commitments.count
            // i^slot ≠ 0, so a different C_slot moves Σ i^k·C_k.
            commitments[slot] = try Point(generatorTimes: Scalar.random(on: curve, using: random))
            claims[position] = SubShareClaim(subShare: claim.subShare, commitments: commitments)
        case .zeroSubShare:
            claims[position] = SubShareClaim(subShare: Scalar(0, curve: curve), commitments: claim.commitments)
        case .noCommitments:
            claims[position] = SubShareClaim(subShare: claim.subShare, commitments: [])
        case .otherCurveSubShare:
            let other: Curve = curve == .secp256k1 ? .ed25519 : .secp256k1
            claims[position] = SubShareClaim(
                subShare: Scalar.random(on: other, using: random), commitments: claim.commitments)
        case .offsetByNext:
            guard position + 1 < claims.count else { return false }
            let delta = Scalar.random(on: curve, using: random)
            claims[position] = SubShareClaim(subShare: claim.subShare + delta, commitments: claim.commitments)
            let next = claims[position + 1]
            claims[position + 1] = SubShareClaim(subShare: next.subShare - delta, commitments: next.commitments)
        }
        return true
    }

    /// The check written out the slow way, sharing no code with the batch: full multiplications for
    /// every i^k·C_k, one claim at a time.
    static func referenceHolds(_ claim: SubShareClaim, index: Int) -> Bool {
        guard let first = claim.commitments.first, claim.subShare.curve == first.curve, !claim.subShare.isZero else {
            return false
        }
        let i = Scalar(UInt64(index), curve: first.curve)
        var power = Scalar(1, curve: first.curve)
        var terms: [Point] = []
        for commitment in claim.commitments {
            guard let term = try? commitment.multiplied(by: power) else { return false }
            terms.append(term)
            power = power * i
        }
        guard let expected = try? Point.sum(terms), let actual = try? Point(generatorTimes: claim.subShare) else {
            return false
        }
        return expected == actual
    }
}
