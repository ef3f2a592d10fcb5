import Foundation
import ShareCrypto

extension Bench {
    /// One receiver's sub-share checks over |Q| dealers, by each ``FeldmanBatch/Strategy``: the
    /// measurement behind ``FeldmanBatch/Strategy/preferred`` (docs/performance.md), redone every run
    /// so that a faster library or another machine shows when the choice should change.
    mutating func subShareChecks(_ curve: Curve) async throws {
        let random = random
        for dealers in [2, 3] {
            let claims = try (0..<dealers).map { _ in
                let polynomial = Polynomial.random(
                    constant: Scalar.random(on: curve, using: random), degree: 1, using: random)
                return SubShareClaim(
                    subShare: polynomial.evaluate(atIndex: 2), commitments: try polynomial.commitments())
            }
            var timed: [(FeldmanBatch.Strategy, Measurement)] = []
            for strategy in FeldmanBatch.Strategy.allCases {
                let measurement = await Timer.measure(
                    "sub-share checks \(curve)", "\(dealers) dealers, \(strategy)", iterations: n(1_000, 100)
                ) {
                    precondition(
                        FeldmanBatch.firstFailure(index: 2, claims: claims, strategy: strategy, using: random) == nil)
                }
                timed.append((strategy, measurement))
            }
            let preferred = timed.first { $0.0 == FeldmanBatch.Strategy.preferred }!.1
            for (strategy, measurement) in timed {
                var m = measurement
                let relative = String(
                    format: "%.2f× the receivers' strategy", Double(m.medianNs) / Double(preferred.medianNs))
                m.note = strategy == FeldmanBatch.Strategy.preferred ? "the receivers' strategy" : relative
                add(m)
            }
        }
    }
}
