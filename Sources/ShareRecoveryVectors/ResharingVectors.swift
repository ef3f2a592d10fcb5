import ShareCrypto
import ShareRecovery

/// `resharing.json`: backup creation and recovery as §3 resharing, with every polynomial explicit.
enum ResharingVectors: VectorKind {
    static let kind = "resharing"
    static let summary =
        "docs/formats.md §3 resharing. The old set is oldShares[0]'s; each dealer j of dealers deals g_j with "
        + "coef_0 = lambda_j * x_j (not listed) and the higher coefficients polynomials[j]; every new party k in "
        + "1..newParties checks all dealings and combines its share. A valid case gives the resulting newShares "
        + "(§4 JSON with secrets). In an invalid case a dealer may instead appear in dealings with the commitments "
        + "and sub-shares it sent; receiving for parties 1..newParties in order must fail, first with the named error."
    static let fields: Set<String> = [
        "curve", "oldShares", "dealers", "polynomials", "newThreshold", "newParties", "newKind", "newGeneration",
        "newSetId", "newShares", "dealings",
    ]

    // MARK: Verification

    /// Builds the plan and every dealing the case describes, then lets each new party receive.
    static func reshare(_ vector: VectorCase) throws -> [ShareRecord] {
        let curveName = try vector.string("curve")
        guard let curve = Curve(name: curveName) else { throw VectorProblem("unknown curve \"\(curveName)\"") }
        let oldShares = try vector.array("oldShares").map { try ShareRecord(json: JSONWriter.write($0)) }
        guard let first = oldShares.first else { throw VectorProblem("oldShares is empty") }
        guard oldShares.allSatisfy({ $0.curve == curve && $0.secret != nil }) else {
            throw VectorProblem("every old share must be on \(curve) and carry its secret")
        }
        let dealers = try vector.array("dealers").map { (value) throws(VectorProblem) in
            try VectorCase.integer(value, field: "dealers")
        }
        let kindName = try vector.string("newKind")
        guard let newKind = SetKind(name: kindName) else { throw VectorProblem("unknown newKind \"\(kindName)\"") }
        let newGeneration = try vector.integer("newGeneration")
        guard newGeneration <= Int(UInt32.max) else { throw VectorProblem("newGeneration is above 2^32 - 1") }
        let plan = try ResharingPlan(
            oldSet: first, dealers: dealers, newThreshold: try vector.integer("newThreshold"),
            newParties: try vector.integer("newParties"), newKind: newKind, newGeneration: UInt32(newGeneration),
            newSetId: try SetID(bytes: try vector.hex("newSetId")))

        let polynomials = try vector.indexed("polynomials")
        let given = vector.has("dealings") ? try vector.indexed("dealings") : [:]
        guard Set(polynomials.keys).isDisjoint(with: given.keys),
            Set(polynomials.keys).union(given.keys) == Set(plan.dealers)
        else { throw VectorProblem("every dealer needs exactly one of polynomials and dealings") }

        var dealings: [Dealing] = []
        for j in plan.dealers {
            if let dealing = given[j] {
                dealings.append(try parseDealing(dealing, dealer: j, curve: curve))
                continue
            }
            guard let share = oldShares.first(where: { $0.partyIndex == j }) else {
                throw VectorProblem("no old share for dealer \(j)")
            }
            guard case .array(let elements) = polynomials[j]! else {
                throw VectorProblem("polynomials[\(j)] must be an array")
            }
            let coefficients = try elements.map { (element) throws in
                guard case .string(let text) = element else {
                    throw VectorProblem("polynomials[\(j)] must hold hex strings")
                }
                let bytes = try VectorCase.hex(text, field: "polynomials")
                return try mappingCryptoErrors { try Scalar(rawRepresentation: bytes, curve: curve) }
            }
            dealings.append(try ResharingDealer.deal(share: share, plan: plan, higherCoefficients: coefficients))
        }
        return try (1...plan.newParties).map { k in
            try ResharingReceiver.receive(partyIndex: k, plan: plan, dealings: dealings)
        }
    }

    static func parseDealing(_ value: JSONValue, dealer: Int, curve: Curve) throws -> Dealing {
        guard case .object(let members) = value, Set(members.map(\.key)) == ["commitments", "subShares"],
            case .array(let commitmentValues)? = value["commitments"], let subShareValues = value["subShares"]
        else { throw VectorProblem("dealings[\(dealer)] must be {commitments, subShares}") }
        // A receiver parses what a dealer sent: a bad encoding is its verdict (invalidPoint, invalidScalar).
        let commitments = try commitmentValues.map { (element) throws -> Point in
            guard case .string(let text) = element else {
                throw VectorProblem("dealing commitments must be hex strings")
            }
            let bytes = try VectorCase.hex(text, field: "commitments")
            return try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: curve) }
        }
        var subShares: [Int: Scalar] = [:]
        for (k, element) in try VectorCase.indexed(subShareValues, field: "subShares") {
            guard case .string(let text) = element else { throw VectorProblem("sub-shares must be hex strings") }
            let bytes = try VectorCase.hex(text, field: "subShares")
            subShares[k] = try mappingCryptoErrors { try Scalar(rawRepresentation: bytes, curve: curve) }
        }
        return Dealing(dealerIndex: dealer, commitments: commitments, subShares: subShares)
    }

    static func checkValid(_ vector: VectorCase) throws {
        guard !vector.has("dealings") else { throw VectorProblem("a valid case deals from polynomials only") }
        let expected = try vector.array("newShares")
        let computed = try reshare(vector)
        guard computed.count == expected.count else {
            throw VectorProblem("computed \(computed.count) new shares, the case lists \(expected.count)")
        }
        for (share, json) in zip(computed, expected) {
            guard share.jsonValue(includingSecret: true).sortedKeys == json.sortedKeys else {
                throw VectorProblem("new share of party \(share.partyIndex) differs")
            }
        }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        guard !vector.has("newShares") else { throw VectorProblem("an invalid case has no newShares") }
        _ = try reshare(vector)
    }

    // MARK: Generation

    /// Everything one resharing needs, in the case's terms.
    struct Setup {
        var oldShares: [ShareRecord]
        var dealers: [Int]
        var polynomials: [Int: [Scalar]]
        var newThreshold: Int
        var newParties: Int
        var newKind: SetKind
        var newGeneration: UInt32
        var newSetId: SetID
        var dealings: [Int: JSONValue] = [:]

        var curve: Curve { oldShares[0].curve }

        init(
            oldShares: [ShareRecord], dealers: [Int], newThreshold: Int, newParties: Int, newKind: SetKind,
            newGeneration: UInt32,
            random: DeterministicRandom
        ) {
            self.oldShares = oldShares
            self.dealers = dealers
            self.newThreshold = newThreshold
            self.newParties = newParties
            self.newKind = newKind
            self.newGeneration = newGeneration
            newSetId = SetID.random(using: random)
            let curve = oldShares[0].curve
            polynomials = Dictionary(
                uniqueKeysWithValues: dealers.map { j in
                    (j, (1..<max(newThreshold, 1)).map { _ in Scalar.random(on: curve, using: random) })
                })
        }

        var plan: ResharingPlan {
            get throws {
                try ResharingPlan(
                    oldSet: oldShares[0], dealers: dealers, newThreshold: newThreshold, newParties: newParties,
                    newKind: newKind, newGeneration: newGeneration, newSetId: newSetId)
            }
        }

        func newShares() throws -> [ShareRecord] {
            let plan = try plan
            let dealings = try dealers.map { j in
                try ResharingDealer.deal(
                    share: oldShares.first { $0.partyIndex == j }!, plan: plan, higherCoefficients: polynomials[j]!)
            }
            return try (1...newParties).map { k in
                try ResharingReceiver.receive(partyIndex: k, plan: plan, dealings: dealings)
            }
        }

        var fields: [(key: String, value: JSONValue)] {
            let listed = polynomials.keys.filter { dealings[$0] == nil }.sorted()
            var out: [(key: String, value: JSONValue)] = [
                ("curve", .string(curve.name)),
                ("oldShares", .array(oldShares.map(VectorFixtures.json))),
                ("dealers", .array(dealers.map(JSONValue.integer))),
                (
                    "polynomials",
                    .object(
                        listed.map { j in
                            (String(j), .array(polynomials[j]!.map { .hex($0.rawRepresentation.revealedBytes()) }))
                        })
                ),
                ("newThreshold", .integer(newThreshold)),
                ("newParties", .integer(newParties)),
                ("newKind", .string(newKind.name)),
                ("newGeneration", .integer(newGeneration)),
                ("newSetId", .hex(newSetId.bytes)),
            ]
            if !dealings.isEmpty {
                out.append(("dealings", .object(dealings.keys.sorted().map { (String($0), dealings[$0]!) })))
            }
            return out
        }
    }

    /// A dealing as JSON, from any polynomial (honest or not).
    static func dealingJSON(
        _ polynomial: Polynomial, newParties: Int, change: (inout [Int: [UInt8]]) -> Void = { _ in }
    ) throws
        -> JSONValue
    {
        var subShares: [Int: [UInt8]] = [:]
        for k in 1...newParties { subShares[k] = polynomial.evaluate(atIndex: k).rawRepresentation.revealedBytes() }
        change(&subShares)
        return .object([
            ("commitments", .array(try polynomial.commitments().map { .string($0.hex) })),
            ("subShares", .object(subShares.keys.sorted().map { (String($0), .hex(subShares[$0]!)) })),
        ])
    }

    /// Dealer j's honest polynomial in a setup, with its constant term optionally changed.
    static func polynomial(_ setup: Setup, dealer j: Int, from share: ShareRecord? = nil, constantOffset: UInt64 = 0)
        throws
        -> Polynomial
    {
        let share = share ?? setup.oldShares.first { $0.partyIndex == j }!
        let lambda = try Shamir.lagrangeCoefficientAtZero(index: j, indices: setup.dealers, curve: setup.curve)
        let constant = lambda * share.secret! + Scalar(constantOffset, curve: setup.curve)
        return try Polynomial(coefficients: [constant] + setup.polynomials[j]!)
    }

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        func valid(_ id: String, _ setup: Setup) throws -> [ShareRecord] {
            let shares = try setup.newShares()
            cases.append(CaseBuilder.valid(id, setup.fields + [("newShares", .array(shares.map(VectorFixtures.json)))]))
            return shares
        }
        func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ setup: Setup) {
            cases.append(CaseBuilder.invalid(id, error, setup.fields))
        }

        var chains: [String: (signing: [ShareRecord], backup: [ShareRecord], recovered: [ShareRecord])] = [:]
        for curve in Curve.allCases {
            for (threshold, parties) in [(2, 2), (2, 3)] {
                let layout = "\(threshold)of\(parties)"
                let signing = try KeyGeneration.generate(
                    curve: curve, walletId: "wallet-\(curve)-\(layout)", threshold: threshold, parties: parties,
                    using: random)
                // Backup creation: the signing set reshared into a backup set of the same generation.
                let backup = try valid(
                    "\(curve)-\(layout)-backup-creation",
                    Setup(
                        oldShares: Array(signing.prefix(threshold)), dealers: Array(1...threshold),
                        newThreshold: threshold,
                        newParties: parties, newKind: .backup, newGeneration: signing[0].generation, random: random))
                // Recovery: user (1) and custodian (2, or 3 for 2-of-3) backup shares into signing generation + 1.
                let recoveryDealers = parties == 3 ? [1, 3] : [1, 2]
                let recovered = try valid(
                    "\(curve)-\(layout)-recovery" + (parties == 3 ? "-dealers-1-and-3" : ""),
                    Setup(
                        oldShares: recoveryDealers.map { backup[$0 - 1] }, dealers: recoveryDealers,
                        newThreshold: threshold,
                        newParties: parties, newKind: .signing, newGeneration: backup[0].generation + 1, random: random)
                )
                chains["\(curve)-\(layout)"] = (signing, backup, recovered)
            }
        }
        let secp23 = chains["secp256k1-2of3"]!, ed22 = chains["ed25519-2of2"]!, secp22 = chains["secp256k1-2of2"]!
        _ = try valid(
            "secp256k1-2of3-backup-creation-dealers-2-and-3",
            Setup(
                oldShares: [secp23.signing[1], secp23.signing[2]], dealers: [2, 3], newThreshold: 2, newParties: 3,
                newKind: .backup,
                newGeneration: 0, random: random))
        _ = try valid(
            "ed25519-2of2-to-3of3",
            Setup(
                oldShares: ed22.signing, dealers: [1, 2], newThreshold: 3, newParties: 3, newKind: .signing,
                newGeneration: 1,
                random: random))

        // Dishonest dealings, given in `dealings`.
        for (curve, chain) in [(Curve.secp256k1, secp22), (.ed25519, ed22)] {
            var setup = Setup(
                oldShares: chain.backup, dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .signing,
                newGeneration: 1,
                random: random)
            setup.dealings[2] = try dealingJSON(try polynomial(setup, dealer: 2, constantOffset: 1), newParties: 2)
            invalid("\(curve)-dealer-wrong-constant-term", .dealerCheckFailed, setup)

            setup.dealings = [:]
            let honest = try polynomial(setup, dealer: 1)
            let wrong = (honest.evaluate(atIndex: 2) + Scalar(1, curve: curve)).rawRepresentation.revealedBytes()
            setup.dealings[1] = try dealingJSON(honest, newParties: 2) { $0[2] = wrong }
            invalid("\(curve)-bad-sub-share-for-party2", .subShareCheckFailed, setup)

            // A lost device's old signing share (set S, generation 0) with the custodian's share of the
            // recovered set S' (generation 1): the old share's dealing is refused against S'.
            var mixed = Setup(
                oldShares: [chain.recovered[1], chain.signing[0]], dealers: [1, 2], newThreshold: 2, newParties: 2,
                newKind: .backup, newGeneration: 1, random: random)
            mixed.dealings[1] = try dealingJSON(try polynomial(mixed, dealer: 1, from: chain.signing[0]), newParties: 2)
            invalid("\(curve)-old-share-mixed-with-new-share", .dealerCheckFailed, mixed)
        }
        var setup = Setup(
            oldShares: secp23.backup, dealers: [1, 2], newThreshold: 2, newParties: 3, newKind: .signing,
            newGeneration: 1,
            random: random)
        let honest1 = try polynomial(setup, dealer: 1)
        setup.dealings[1] = .object([
            ("commitments", .array([.string(try honest1.commitments()[0].hex)])),
            ("subShares", try dealingJSON(honest1, newParties: 3)["subShares"]!),
        ])
        invalid("secp256k1-2of3-dealer-too-few-commitments", .dealerCheckFailed, setup)
        setup.dealings[1] = try dealingJSON(honest1, newParties: 3) { $0[3] = nil }
        invalid("secp256k1-2of3-dealer-sends-no-sub-share-to-party3", .subShareCheckFailed, setup)
        setup.dealings[1] = try dealingJSON(honest1, newParties: 3) { $0[3] = $0[2] }
        invalid("secp256k1-2of3-dealer-sends-party2-sub-share-to-party3", .subShareCheckFailed, setup)

        // Plans and inputs the dealers refuse.
        var refused = Setup(
            oldShares: secp22.signing, dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .backup,
            newGeneration: 0,
            random: random)
        refused.newSetId = secp22.signing[0].setId
        invalid("secp256k1-new-set-id-equals-old", .invalidParameters, refused)
        refused = Setup(
            oldShares: [secp22.signing[0]], dealers: [1], newThreshold: 2, newParties: 2, newKind: .backup,
            newGeneration: 0,
            random: random)
        invalid("secp256k1-too-few-dealers", .invalidParameters, refused)
        refused = Setup(
            oldShares: secp22.signing, dealers: [1, 2], newThreshold: 3, newParties: 2, newKind: .backup,
            newGeneration: 0,
            random: random)
        invalid("secp256k1-new-threshold-above-new-parties", .invalidParameters, refused)
        refused = Setup(
            oldShares: ed22.signing, dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .backup,
            newGeneration: 0,
            random: random)
        refused.polynomials[2] = [Scalar(0, curve: .ed25519)]
        invalid("ed25519-zero-higher-coefficient", .invalidScalar, refused)
        refused.polynomials[2] = []
        invalid("ed25519-too-few-higher-coefficients", .invalidParameters, refused)
        refused = Setup(
            oldShares: [secp22.signing[0], secp22.backup[1]], dealers: [1, 2], newThreshold: 2, newParties: 2,
            newKind: .backup,
            newGeneration: 0, random: random)
        invalid("secp256k1-dealer-share-of-another-set", .invalidParameters, refused)

        // Two bad sub-shares whose errors cancel in the sum: each dealer's check must still fail.
        for (curve, chain) in [(Curve.secp256k1, secp22), (.ed25519, ed22)] {
            var offsetting = Setup(
                oldShares: chain.backup, dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .signing,
                newGeneration: 1,
                random: random)
            let one = Scalar(1, curve: curve)
            let first = try polynomial(offsetting, dealer: 1), second = try polynomial(offsetting, dealer: 2)
            offsetting.dealings[1] = try dealingJSON(first, newParties: 2) {
                $0[2] = (first.evaluate(atIndex: 2) + one).rawRepresentation.revealedBytes()
            }
            offsetting.dealings[2] = try dealingJSON(second, newParties: 2) {
                $0[2] = (second.evaluate(atIndex: 2) - one).rawRepresentation.revealedBytes()
            }
            invalid("\(curve)-offsetting-bad-sub-shares-for-party2", .subShareCheckFailed, offsetting)
        }
        return cases
    }
}
