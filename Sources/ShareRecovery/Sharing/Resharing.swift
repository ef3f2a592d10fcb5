public import ShareCrypto

/// The public parameters every party of one resharing agrees on (docs/formats.md §3).
public struct ResharingPlan: Sendable, Equatable {
    /// A public description of the old set (any member's record without its secret).
    public let oldSet: ShareRecord
    /// Q: the dealers' indices in the old set, |Q| = t.
    public let dealers: [Int]
    /// t'.
    public let newThreshold: Int
    /// n'.
    public let newParties: Int
    /// The new set's kind.
    public let newKind: SetKind
    /// The new set's generation.
    public let newGeneration: UInt32
    /// setId', fresh and different from the old one.
    public let newSetId: SetID
    /// λ_j^Q for every dealer j.
    private let lagrangeCoefficients: [Int: Scalar]
    /// λ_j^Q as a fraction of small integers, where the products fit (docs/formats.md §3 steps 1–2 by
    /// additions instead of k·P).
    private let lagrangeFractions: [Int: LagrangeFraction]
    /// λ_j·X_j for the old record's own index j when λ_j is a small integer: what that dealer
    /// publishes as D_{j,0} and what the dealer check compares it with, computed once per plan.
    let ownConstantCommitment: Point?

    /// Creates a plan and checks it.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a bad Q, t', n' or a reused setId.
    public init(
        oldSet: ShareRecord, dealers: [Int], newThreshold: Int, newParties: Int, newKind: SetKind,
        newGeneration: UInt32, newSetId: SetID
    ) throws(ShareRecoveryError) {
        let sortedDealers = dealers.sorted()
        guard sortedDealers.count == oldSet.threshold, Set(sortedDealers).count == sortedDealers.count,
            sortedDealers.allSatisfy({ (1...oldSet.parties).contains($0) })
        else {
            throw ShareRecoveryError(
                .invalidParameters,
                "dealers must be \(oldSet.threshold) distinct indices of the old set, got \(dealers)")
        }
        try ShareRecord.checkRanges(
            walletIdCount: oldSet.walletId.utf8.count, threshold: newThreshold, parties: newParties, partyIndex: 1)
        guard newSetId != oldSet.setId else {
            throw ShareRecoveryError(.invalidParameters, "the new setId equals the old one")
        }
        self.oldSet = oldSet.publicDescription
        self.dealers = sortedDealers
        self.newThreshold = newThreshold
        self.newParties = newParties
        self.newKind = newKind
        self.newGeneration = newGeneration
        self.newSetId = newSetId
        // λ_j^Q depends only on the plan: computed here, not per use. An integer λ_j (Q = {1, …, t})
        // needs no inversion, which in Swift costs about one k·G.
        var coefficients: [Int: Scalar] = [:]
        var fractions: [Int: LagrangeFraction] = [:]
        for dealer in sortedDealers {
            let fraction = LagrangeFraction(index: dealer, indices: sortedDealers)
            fractions[dealer] = fraction
            if let fraction, fraction.denominator == 1 {
                let magnitude = Scalar(UInt64(fraction.numerator.magnitude), curve: oldSet.curve)
                coefficients[dealer] = fraction.numerator < 0 ? magnitude.negated : magnitude
                continue
            }
            coefficients[dealer] = try mappingCryptoErrors {
                try Shamir.lagrangeCoefficientAtZero(index: dealer, indices: sortedDealers, curve: oldSet.curve)
            }
        }
        lagrangeCoefficients = coefficients
        lagrangeFractions = fractions
        let own = fractions[oldSet.partyIndex].flatMap { $0.isSmall && $0.denominator == 1 ? $0.numerator : nil }
        ownConstantCommitment = own.flatMap { numerator in
            (try? oldSet.publicShare).flatMap { try? LagrangeFraction.multiple($0, by: numerator) }
        }
    }

    var curve: Curve { oldSet.curve }

    /// λ_j^Q for a dealer.
    func lagrange(_ dealer: Int) throws(ShareRecoveryError) -> Scalar {
        guard let coefficient = lagrangeCoefficients[dealer] else {
            throw ShareRecoveryError(.invalidParameters, "party \(dealer) is not a dealer of this plan")
        }
        return coefficient
    }

    /// λ_j^Q as a small fraction, when it is one.
    func smallLagrangeFraction(_ dealer: Int) -> LagrangeFraction? {
        lagrangeFractions[dealer].flatMap { $0.isSmall ? $0 : nil }
    }
}

/// What one dealer publishes and sends: commitments D_{j,m} to everyone, sub-share g_j(k) to party k.
public struct Dealing: Sendable {
    /// j.
    public let dealerIndex: Int
    /// D_{j,0} … D_{j,t'−1}.
    public let commitments: [Point]
    /// g_j(k) for every new party k (1…n').
    public let subShares: [Int: Scalar]

    /// Assembles a dealing (e.g. one received over the network).
    public init(dealerIndex: Int, commitments: [Point], subShares: [Int: Scalar]) {
        self.dealerIndex = dealerIndex
        self.commitments = commitments
        self.subShares = subShares
    }
}

/// The dealer role of §3 step 1.
public enum ResharingDealer {
    /// Deals from one share of the old set with a fresh random polynomial.
    /// - Parameters:
    ///   - share: The dealer's old share, with its secret; must belong to the plan's old set.
    ///   - plan: The agreed plan.
    ///   - random: Source of g_j's higher coefficients.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when the share is not a dealer of the plan.
    public static func deal(
        share: ShareRecord, plan: ResharingPlan, using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> Dealing {
        let higher = (1..<plan.newThreshold).map { _ in Scalar.random(on: plan.curve, using: random) }
        return try deal(share: share, plan: plan, higherCoefficients: higher)
    }

    /// Deals with explicit higher coefficients coef_{j,1} … coef_{j,t'−1} (vectors, tests).
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a wrong share or coefficient count,
    ///   ``ShareRecoveryError/Code/invalidScalar`` when a coefficient is zero.
    public static func deal(share: ShareRecord, plan: ResharingPlan, higherCoefficients: [Scalar])
        throws(ShareRecoveryError)
        -> Dealing
    {
        guard let secret = share.secret, share.isSameSet(as: plan.oldSet), plan.dealers.contains(share.partyIndex)
        else {
            throw ShareRecoveryError(
                .invalidParameters, "party \(share.partyIndex)'s share is not a dealer share of this plan")
        }
        guard higherCoefficients.count == plan.newThreshold - 1,
            higherCoefficients.allSatisfy({ $0.curve == plan.curve })
        else {
            throw ShareRecoveryError(.invalidParameters, "dealer needs \(plan.newThreshold - 1) higher coefficients")
        }
        // w_j = λ_j·x_j: the dealer's additive part of x.
        let weighted = try plan.lagrange(share.partyIndex) * secret
        let polynomial = try mappingCryptoErrors { try Polynomial(coefficients: [weighted] + higherCoefficients) }
        let commitments = try mappingCryptoErrors { () throws -> [Point] in
            // D_{j,0} = w_j·G = λ_j·X_j, since a record with a secret has x_j·G == X_j (§4): for a small
            // integer λ_j (Q = {1, …, t} gives only those) additions from public X_j replace a k·G.
            guard let fraction = plan.smallLagrangeFraction(share.partyIndex), fraction.denominator == 1 else {
                return try polynomial.commitments()
            }
            let constant =
                if share.partyIndex == plan.oldSet.partyIndex, let own = plan.ownConstantCommitment { own } else {
                    try LagrangeFraction.multiple(try share.publicShare, by: fraction.numerator)
                }
            return try [constant] + higherCoefficients.map { try Point(generatorTimes: $0) }
        }
        var subShares: [Int: Scalar] = [:]
        for k in 1...plan.newParties { subShares[k] = polynomial.evaluate(atIndex: k) }
        return Dealing(dealerIndex: share.partyIndex, commitments: commitments, subShares: subShares)
    }
}

/// The receiver role of §3 steps 2–5.
public enum ResharingReceiver {
    /// Checks every dealing and combines this party's new share.
    /// - Parameters:
    ///   - k: The new party's index (`partyIndex`), 1…n'.
    ///   - plan: The agreed plan.
    ///   - dealings: One dealing from every dealer of Q.
    /// - Returns: Party k's new share record, with its secret.
    /// - Throws: ``ShareRecoveryError``: `dealerCheckFailed` (naming the dealer) for a missing, misshapen
    ///   or dishonest dealing; `subShareCheckFailed` (naming the dealer) for a bad sub-share;
    ///   `invalidPoint` for an identity A'_m; `invalidScalar` for a zero x'_k; `publicKeyMismatch` when A'_0 ≠ Y;
    ///   `invalidShare` when x'_k·G ≠ X'_k.
    public static func receive(partyIndex k: Int, plan: ResharingPlan, dealings: [Dealing]) throws(ShareRecoveryError)
        -> ShareRecord
    {
        try receive(partyIndices: [k], plan: plan, dealings: dealings)[0]
    }

    /// Receives for several new parties at once (one process holding them all): the dealer checks
    /// and the new commitments are computed once, then each party's share is combined and checked.
    /// - Throws: As ``receive(partyIndex:plan:dealings:)``.
    public static func receive(partyIndices: [Int], plan: ResharingPlan, dealings: [Dealing]) throws(ShareRecoveryError)
        -> [ShareRecord]
    {
        guard !partyIndices.isEmpty, Set(partyIndices).count == partyIndices.count,
            partyIndices.allSatisfy({ (1...plan.newParties).contains($0) })
        else {
            throw ShareRecoveryError(
                .invalidParameters, "parties \(partyIndices) are not distinct members of the new set")
        }
        let (ordered, constantSum) = try checkedDealings(plan: plan, dealings: dealings)
        let newCommitments = try combinedCommitments(plan: plan, dealings: ordered, constantSum: constantSum)
        // Σ_m k^m·D_{j,m} for every receiver at once: consecutive receivers share the work.
        let expected = ordered.map { Shamir.publicShares(indices: partyIndices, commitments: $0.commitments) }
        return try partyIndices.enumerated().map { (position, k) throws(ShareRecoveryError) -> ShareRecord in
            // Step 3, dealer by dealer (docs/formats.md §3): errors that cancel in a sum must still abort.
            try checkSubShares(partyIndex: k, dealings: ordered, expected: expected.map { $0[position] })
            var newSecret = Scalar(0, curve: plan.curve)
            for dealing in ordered { newSecret = newSecret + dealing.subShares[k]! }
            guard !newSecret.isZero else { throw ShareRecoveryError(.invalidScalar, "the new share is zero") }
            // Step 5 follows from step 3 and A'_m = Σ_j D_{j,m}: x'_k·G = Σ_j g_j(k)·G = Σ_j Σ_m k^m·D_{j,m} = X'_k.
            return try ShareRecord(
                verified: (), walletId: plan.oldSet.walletId, curve: plan.curve, kind: plan.newKind,
                threshold: plan.newThreshold, parties: plan.newParties, partyIndex: k, generation: plan.newGeneration,
                setId: plan.newSetId, secret: newSecret, commitments: newCommitments)
        }
    }

    /// Checks g_j(k)·G == Σ_m k^m·D_{j,m} for every dealer, naming the first that fails.
    /// `expected[j]`: dealer j's Σ_m k^m·D_{j,m} when already evaluated.
    private static func checkSubShares(partyIndex k: Int, dealings: [Dealing], expected: [Point?])
        throws(ShareRecoveryError)
    {
        // The dealers before the first one that sent k nothing, in Q's order.
        let sent = dealings.prefix { $0.subShares[k] != nil }
        let claims = sent.enumerated().map { position, dealing in
            SubShareClaim(
                subShare: dealing.subShares[k]!, commitments: dealing.commitments, expected: expected[position])
        }
        if let position = FeldmanBatch.firstFailure(index: k, claims: claims) {
            throw ShareRecoveryError(
                .subShareCheckFailed,
                "dealer \(sent[position].dealerIndex)'s sub-share for party \(k) does not match its commitments")
        }
        if sent.count < dealings.count {
            throw ShareRecoveryError(
                .subShareCheckFailed, "dealer \(dealings[sent.count].dealerIndex) sent no sub-share to party \(k)")
        }
    }

    /// The new set's commitments A'_m = Σ_j D_{j,m}, after every dealer check and A'_0 == Y.
    /// - Throws: As ``receive(partyIndex:plan:dealings:)``, without the sub-share checks.
    public static func newCommitments(plan: ResharingPlan, dealings: [Dealing]) throws(ShareRecoveryError) -> [Point] {
        let (ordered, constantSum) = try checkedDealings(plan: plan, dealings: dealings)
        return try combinedCommitments(plan: plan, dealings: ordered, constantSum: constantSum)
    }

    /// Step 2 for every dealer, in Q's order: one dealing each, t' commitments, D_{j,0} == λ_j·X_j.
    /// The last dealer of Q is checked as Σ_j D_{j,0} == Y: Σ_{j∈Q} λ_j·X_j = A_0 = Y for any
    /// commitments (|Q| = t), so with the others equal to λ_j·X_j the sum holds exactly when the last
    /// one does; that sum is A'_0, returned for step 4 (docs/performance.md).
    private static func checkedDealings(plan: ResharingPlan, dealings: [Dealing]) throws(ShareRecoveryError)
        -> (dealings: [Dealing], constantSum: Point)
    {
        var byDealer: [Int: Dealing] = [:]
        for dealing in dealings {
            guard plan.dealers.contains(dealing.dealerIndex), byDealer[dealing.dealerIndex] == nil else {
                throw ShareRecoveryError(.dealerCheckFailed, "dealer \(dealing.dealerIndex) is not in Q or dealt twice")
            }
            byDealer[dealing.dealerIndex] = dealing
        }
        var checked: [Dealing] = []
        for j in plan.dealers {
            guard let dealing = byDealer[j] else {
                throw ShareRecoveryError(.dealerCheckFailed, "dealer \(j) sent no dealing")
            }
            guard dealing.commitments.count == plan.newThreshold,
                dealing.commitments.allSatisfy({ $0.curve == plan.curve })
            else {
                throw ShareRecoveryError(
                    .dealerCheckFailed,
                    "dealer \(j) sent \(dealing.commitments.count) commitments, expected \(plan.newThreshold)")
            }
            checked.append(dealing)
            if j == plan.dealers.last {
                // The identity sum is not Y, which is a valid point.
                if let sum = try? Point.sum(checked.map { $0.commitments[0] }), sum == plan.oldSet.publicKey {
                    return (checked, sum)
                }
                // Only on failure: an identity X_j (crafted old commitments) keeps its own error, as before.
                _ = try mappingCryptoErrors { try Shamir.publicShare(index: j, commitments: plan.oldSet.commitments) }
            } else if try dealtItsShare(dealing, plan: plan) {
                continue
            }
            throw ShareRecoveryError(.dealerCheckFailed, "dealer \(j)'s constant term is not λ_j·X_j")
        }
        // Q is never empty (t ≥ 2), so the loop returned or threw at its last dealer.
        throw ShareRecoveryError(.invalidParameters, "the plan has no dealers")
    }

    /// D_{j,0} == λ_j·X_j for a dealer other than the last; small fractions λ_j = a/b are checked
    /// as b·D_{j,0} == a·X_j by additions instead of a k·P.
    private static func dealtItsShare(_ dealing: Dealing, plan: ResharingPlan) throws(ShareRecoveryError) -> Bool {
        let j = dealing.dealerIndex
        let constant = dealing.commitments[0]
        if j == plan.oldSet.partyIndex, let expected = plan.ownConstantCommitment { return constant == expected }
        let oldPublicShare: Point =
            if j == plan.oldSet.partyIndex { try plan.oldSet.publicShare } else {
                try mappingCryptoErrors { try Shamir.publicShare(index: j, commitments: plan.oldSet.commitments) }
            }
        return try mappingCryptoErrors { () throws -> Bool in
            guard let fraction = plan.smallLagrangeFraction(j) else {
                return constant == (try oldPublicShare.multiplied(by: try plan.lagrange(j)))
            }
            let left = try LagrangeFraction.multiple(constant, by: fraction.denominator)
            return left == (try LagrangeFraction.multiple(oldPublicShare, by: fraction.numerator))
        }
    }

    /// `constantSum`: A'_0, already summed by the last dealer's check.
    private static func combinedCommitments(plan: ResharingPlan, dealings: [Dealing], constantSum: Point)
        throws(ShareRecoveryError)
        -> [Point]
    {
        let commitments = try (0..<plan.newThreshold).map { (m) throws(ShareRecoveryError) -> Point in
            if m == 0 { return constantSum }
            do {
                return try Point.sum(dealings.map { $0.commitments[m] })
            } catch {
                throw ShareRecoveryError(.invalidPoint, "new commitment A'_\(m) is the identity")
            }
        }
        guard commitments[0] == plan.oldSet.publicKey else {
            throw ShareRecoveryError(.publicKeyMismatch, "A'_0 ≠ Y: the resharing would change the wallet key")
        }
        return commitments
    }
}

/// Both roles in one process: offline recovery, backup creation from local shares, tests.
public enum Resharing {
    /// Reshares t shares of one set into a new set. The key is never rebuilt: each dealer deals its
    /// own weighted share, and each new party combines what it receives.
    /// - Parameters:
    ///   - shares: Exactly t shares of one set, with secrets.
    ///   - newThreshold: t'.
    ///   - newParties: n'.
    ///   - newKind: The new set's kind.
    ///   - newGeneration: The new set's generation.
    ///   - random: The random source.
    /// - Returns: The n' new shares, party 1 first.
    /// - Throws: ``ShareRecoveryError`` from the plan, the dealers or the receivers.
    public static func reshare(
        _ shares: [ShareRecord], newThreshold: Int, newParties: Int, newKind: SetKind, newGeneration: UInt32,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> [ShareRecord] {
        guard let first = shares.first, shares.allSatisfy({ $0.isSameSet(as: first) && $0.secret != nil }) else {
            throw ShareRecoveryError(.invalidParameters, "resharing needs shares of one set, with secrets")
        }
        var setId = SetID.random(using: random)
        while setId == first.setId { setId = SetID.random(using: random) }
        let plan = try ResharingPlan(
            oldSet: first, dealers: shares.map(\.partyIndex), newThreshold: newThreshold, newParties: newParties,
            newKind: newKind, newGeneration: newGeneration, newSetId: setId)
        let dealings = try shares.map { (share) throws(ShareRecoveryError) in
            try ResharingDealer.deal(share: share, plan: plan, using: random)
        }
        return try ResharingReceiver.receive(partyIndices: Array(1...newParties), plan: plan, dealings: dealings)
    }
}
