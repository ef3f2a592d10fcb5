import Foundation
import ShareCrypto
import ShareRecovery
import Testing

/// The resharing checks after their arithmetic was cut (docs/performance.md): dealers' constant
/// terms from λ_j·X_j, the dealer check by small multiples and, for the last dealer, by Σ D_{j,0}
/// == Y, and the sub-share checks through ``FeldmanBatch``. Random sets and random lies: the error
/// and the dealer it names must be those of the plain §3 order (dealers in Q's order; receivers in
/// order, each checking every dealer). `RESHARING_CULPRIT_SEED=<seed>` reruns a failing run.
@Suite("Resharing names the dishonest dealer")
struct ResharingCulpritTests {
    static let seed = ProcessInfo.processInfo.environment["RESHARING_CULPRIT_SEED"].flatMap(UInt64.init) ?? 0x5EED_0317
    static let cases = 160

    struct Scenario {
        let plan: ResharingPlan
        let shares: [ShareRecord]
        var dealings: [Dealing]
    }

    @Test("honest dealings: constant terms equal λ_j·x_j·G and the key is kept", arguments: Curve.allCases)
    func honestDealings(curve: Curve) throws {
        try Self.forEachCase("honest", curve: curve, count: Self.cases / 4) { label, _, scenario in
            for dealing in scenario.dealings {
                let share = scenario.shares.first { $0.partyIndex == dealing.dealerIndex }!
                let lambda = try Shamir.lagrangeCoefficientAtZero(
                    index: dealing.dealerIndex, indices: scenario.plan.dealers, curve: curve)
                #expect(
                    dealing.commitments[0] == (try Point(generatorTimes: lambda * share.secret!)),
                    "\(label): dealer \(dealing.dealerIndex)")
            }
            let newShares = try ResharingReceiver.receive(
                partyIndices: Array(1...scenario.plan.newParties), plan: scenario.plan, dealings: scenario.dealings)
            #expect(newShares.allSatisfy { $0.publicKey == scenario.plan.oldSet.publicKey }, "\(label)")
        }
    }

    @Test(
        "a wrong constant term fails dealerCheckFailed naming the first dishonest dealer of Q",
        arguments: Curve.allCases)
    func wrongConstantTerm(curve: Curve) throws {
        try Self.forEachCase("constant-term", curve: curve, count: Self.cases) { label, random, scenario in
            var liars: [Int] = []
            for (position, dealing) in scenario.dealings.enumerated() where random.bytes(count: 1)[0] % 2 == 0 {
                var commitments = dealing.commitments
                // Off by G: as close to honest as a lie gets.
                commitments[0] = try commitments[0] + Point.generator(on: curve)
                scenario.dealings[position] = Dealing(
                    dealerIndex: dealing.dealerIndex, commitments: commitments, subShares: dealing.subShares)
                liars.append(dealing.dealerIndex)
            }
            guard let first = liars.min() else { return }
            let error = Self.receiveError(scenario)
            #expect(error?.code == .dealerCheckFailed, "\(label): \(String(describing: error))")
            #expect(
                error?.reason == "dealer \(first)'s constant term is not λ_j·X_j",
                "\(label): \(String(describing: error))")
        }
    }

    @Test(
        "a wrong sub-share fails subShareCheckFailed naming the first receiver's first dishonest dealer",
        arguments: Curve.allCases)
    func wrongSubShare(curve: Curve) throws {
        try Self.forEachCase("sub-share", curve: curve, count: Self.cases) { label, random, scenario in
            var lies: [(receiver: Int, dealer: Int)] = []
            for (position, dealing) in scenario.dealings.enumerated() {
                var subShares = dealing.subShares
                for k in subShares.keys.sorted() where random.bytes(count: 1)[0] % 5 == 0 {
                    subShares[k] = subShares[k]! + Scalar.random(on: curve, using: random)
                    lies.append((k, dealing.dealerIndex))
                }
                scenario.dealings[position] = Dealing(
                    dealerIndex: dealing.dealerIndex, commitments: dealing.commitments, subShares: subShares)
            }
            guard let first = lies.min(by: { ($0.receiver, $0.dealer) < ($1.receiver, $1.dealer) }) else { return }
            let error = Self.receiveError(scenario)
            #expect(error?.code == .subShareCheckFailed, "\(label): \(String(describing: error))")
            #expect(
                error?.reason
                    == "dealer \(first.dealer)'s sub-share for party \(first.receiver) does not match its commitments",
                "\(label): \(String(describing: error))")
        }
    }

    // MARK: Generation

    /// Runs `body` on `count` scenarios, each drawn from its own label (printed in every expectation).
    static func forEachCase(
        _ kind: String, curve: Curve, count: Int, _ body: (String, DeterministicRandom, inout Scenario) throws -> Void
    ) throws {
        for number in 0..<count {
            let label = "seed \(seed), \(curve) \(kind) case \(number)"
            let random = DeterministicRandom(seed: Array(label.utf8))
            var drawn = try Self.scenario(curve: curve, random: random)
            try body(label, random, &drawn)
        }
    }

    /// A random old set (t-of-n, t ≤ 4), a random Q, a random new threshold and size, honest dealings.
    static func scenario(curve: Curve, random: some RandomSource) throws -> Scenario {
        let draw = random.bytes(count: 4)
        let parties = Int(draw[0] % 4) + 2
        let threshold = Int(draw[1]) % (parties - 1) + 2
        let newParties = Int(draw[2] % 4) + 2
        let newThreshold = Int(draw[3]) % (newParties - 1) + 2
        let set = try KeyGeneration.generate(
            curve: curve, walletId: "culprit", threshold: threshold, parties: parties, using: random)
        // Q: t distinct members, drawn by sorting on random keys.
        let shares = Array(
            set.map { ($0, random.bytes(count: 4)) }.sorted { $0.1.lexicographicallyPrecedes($1.1) }.prefix(threshold)
                .map(\.0))
        let plan = try ResharingPlan(
            oldSet: shares[0], dealers: shares.map(\.partyIndex), newThreshold: newThreshold, newParties: newParties,
            newKind: .signing,
            newGeneration: 1, newSetId: SetID.random(using: random))
        let dealings = try shares.map { try ResharingDealer.deal(share: $0, plan: plan, using: random) }
        return Scenario(plan: plan, shares: shares, dealings: dealings)
    }

    static func receiveError(_ scenario: Scenario) -> ShareRecoveryError? {
        do {
            _ = try ResharingReceiver.receive(
                partyIndices: Array(1...scenario.plan.newParties), plan: scenario.plan, dealings: scenario.dealings)
            return nil
        } catch {
            return error
        }
    }
}
