import ShareCrypto
import ShareRecovery

/// `dkg.json`: docs/formats.md §10 distributed key generation, every polynomial and proof nonce explicit.
enum DKGVectors: VectorKind {
    static let kind = "dkg"
    static let summary =
        "docs/formats.md §10 distributed key generation. Party i draws polynomials[i] (a_{i,0} first) and proves "
        + "knowledge of a_{i,0} with nonce proofNonces[i]; every party checks all broadcasts, then all sub-shares, "
        + "and combines its signing share. A valid case gives the resulting shares (§4 JSON with secrets, "
        + "generation 0, the §10 setId). In an invalid case a party appears in messages instead, with the "
        + "commitments, proof {R, mu} and subShares (receiver -> f_i(j)) it sent; the honest parties, ascending, "
        + "first check every round-1 broadcast, then finish round 2, and must fail first with the named error."
    static let fields: Set<String> = [
        "curve", "walletId", "threshold", "parties", "polynomials", "proofNonces", "shares", "messages",
    ]

    // MARK: Verification

    /// Runs the case: honest parties from their polynomials, the others' messages as given.
    static func run(_ vector: VectorCase) throws -> [ShareRecord] {
        let curveName = try vector.string("curve")
        guard let curve = Curve(name: curveName) else { throw VectorProblem("unknown curve \"\(curveName)\"") }
        let parameters = try DKGParameters(
            curve: curve, walletId: try vector.string("walletId"), threshold: try vector.integer("threshold"),
            parties: try vector.integer("parties"))
        let polynomials = try vector.indexed("polynomials")
        let nonces = try vector.indexed("proofNonces")
        let given = vector.has("messages") ? try vector.indexed("messages") : [:]
        guard Set(polynomials.keys) == Set(nonces.keys), Set(polynomials.keys).isDisjoint(with: given.keys),
            Set(polynomials.keys).union(given.keys) == Set(parameters.partyIndices)
        else { throw VectorProblem("every party needs either polynomials and proofNonces, or messages") }

        var honest: [DKGParty] = []
        for i in polynomials.keys.sorted() {
            guard case .array(let elements) = polynomials[i]!, case .string(let nonceHex) = nonces[i]! else {
                throw VectorProblem("polynomials[\(i)] must be an array and proofNonces[\(i)] a hex string")
            }
            let coefficients = try elements.map { (element) throws in
                try scalar(element, curve: curve, field: "polynomials")
            }
            let nonce = try scalar(.string(nonceHex), curve: curve, field: "proofNonces")
            honest.append(
                try DKGParty(parameters: parameters, partyIndex: i, coefficients: coefficients, proofNonce: nonce))
        }
        guard !given.isEmpty else { return try DistributedKeyGeneration.run(parties: honest) }

        var broadcasts = honest.map(\.round1Message)
        var sent: [DKGRound2Message] = []
        for i in given.keys.sorted() {
            let (broadcast, subShares) = try parseMessages(given[i]!, sender: i, curve: curve)
            broadcasts.append(broadcast)
            sent += subShares
        }
        // Round 1 everywhere before round 2 anywhere, as parties on a network would.
        let rounds = try honest.map { try $0.receive(round1: broadcasts) }
        sent += rounds.flatMap(\.messages)
        return try rounds.map { round in
            try round.state.finish(round2: sent.filter { $0.receiver == round.state.partyIndex })
        }
    }

    private static func scalar(_ value: JSONValue, curve: Curve, field: String) throws -> Scalar {
        guard case .string(let text) = value else { throw VectorProblem("\"\(field)\" must hold hex strings") }
        let bytes = try VectorCase.hex(text, field: field)
        return try mappingCryptoErrors { try Scalar(rawRepresentation: bytes, curve: curve) }
    }

    /// `{commitments, proof: {R, mu}, subShares}` as the sender's two messages. A receiver parses what
    /// a party sent: a bad encoding is its verdict (`invalidPoint`, `invalidScalar`).
    static func parseMessages(_ value: JSONValue, sender: Int, curve: Curve) throws -> (
        DKGRound1Message, [DKGRound2Message]
    ) {
        guard case .object(let members) = value, Set(members.map(\.key)) == ["commitments", "proof", "subShares"],
            case .array(let commitmentValues)? = value["commitments"], let proofValue = value["proof"],
            case .object(let proofMembers) = proofValue, Set(proofMembers.map(\.key)) == ["R", "mu"],
            case .string(let rText)? = proofValue["R"], let muValue = proofValue["mu"],
            let subShareValues = value["subShares"]
        else { throw VectorProblem("messages[\(sender)] must be {commitments, proof: {R, mu}, subShares}") }
        let commitments = try commitmentValues.map { (element) throws -> Point in
            guard case .string(let text) = element else { throw VectorProblem("commitments must be hex strings") }
            let bytes = try VectorCase.hex(text, field: "commitments")
            return try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: curve) }
        }
        let rBytes = try VectorCase.hex(rText, field: "R")
        let proof = try mappingCryptoErrors {
            try DKGProof(
                commitment: Point(rawRepresentation: rBytes, curve: curve),
                response: try scalar(muValue, curve: curve, field: "mu"))
        }
        var subShares: [DKGRound2Message] = []
        for (receiver, element) in try VectorCase.indexed(subShareValues, field: "subShares").sorted(by: {
            $0.key < $1.key
        }) {
            subShares.append(
                DKGRound2Message(
                    sender: sender, receiver: receiver, subShare: try scalar(element, curve: curve, field: "subShares"))
            )
        }
        return (DKGRound1Message(sender: sender, commitments: commitments, proof: proof), subShares)
    }

    static func checkValid(_ vector: VectorCase) throws {
        guard !vector.has("messages") else { throw VectorProblem("a valid case runs from polynomials only") }
        let expected = try vector.array("shares")
        let computed = try run(vector)
        guard computed.count == expected.count else {
            throw VectorProblem("computed \(computed.count) shares, the case lists \(expected.count)")
        }
        for (share, json) in zip(computed, expected)
        where share.jsonValue(includingSecret: true).sortedKeys != json.sortedKeys {
            throw VectorProblem("the share of party \(share.partyIndex) differs")
        }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        guard !vector.has("shares") else { throw VectorProblem("an invalid case has no shares") }
        _ = try run(vector)
    }

    // MARK: Generation

    /// One DKG's inputs in the case's terms.
    struct Setup {
        let curve: Curve
        let walletId: String
        var threshold: Int
        let parties: Int
        var polynomials: [Int: [Scalar]]
        var proofNonces: [Int: Scalar]
        var messages: [Int: JSONValue] = [:]

        init(curve: Curve, walletId: String, threshold: Int, parties: Int, random: DeterministicRandom) {
            self.curve = curve
            self.walletId = walletId
            self.threshold = threshold
            self.parties = parties
            var polynomials: [Int: [Scalar]] = [:], nonces: [Int: Scalar] = [:]
            for i in 1...parties {
                polynomials[i] = (0..<threshold).map { _ in Scalar.random(on: curve, using: random) }
                nonces[i] = Scalar.random(on: curve, using: random)
            }
            self.polynomials = polynomials
            proofNonces = nonces
        }

        var parameters: DKGParameters {
            get throws { try DKGParameters(curve: curve, walletId: walletId, threshold: threshold, parties: parties) }
        }

        func party(_ i: Int) throws -> DKGParty {
            try DKGParty(
                parameters: try parameters, partyIndex: i, coefficients: polynomials[i]!, proofNonce: proofNonces[i]!)
        }

        /// Party i's honest messages, to be changed into a dishonest one.
        func honestMessages(_ i: Int) throws -> (commitments: [Point], proof: DKGProof, subShares: [Int: Scalar]) {
            let party = try party(i)
            let polynomial = try Polynomial(coefficients: polynomials[i]!)
            var subShares: [Int: Scalar] = [:]
            for j in 1...parties where j != i { subShares[j] = polynomial.evaluate(atIndex: j) }
            return (party.round1Message.commitments, party.round1Message.proof, subShares)
        }

        /// Replaces party i's messages.
        mutating func replace(
            _ i: Int, commitments: [[UInt8]], proof: (r: [UInt8], mu: [UInt8]), subShares: [Int: [UInt8]]
        ) {
            messages[i] = .object([
                ("commitments", .array(commitments.map { .hex($0) })),
                ("proof", .object([("R", .hex(proof.r)), ("mu", .hex(proof.mu))])),
                ("subShares", .object(subShares.keys.sorted().map { (String($0), .hex(subShares[$0]!)) })),
            ])
        }

        var fields: [(key: String, value: JSONValue)] {
            let listed = polynomials.keys.filter { messages[$0] == nil }.sorted()
            var out: [(key: String, value: JSONValue)] = [
                ("curve", .string(curve.name)), ("walletId", .string(walletId)), ("threshold", .integer(threshold)),
                ("parties", .integer(parties)),
                (
                    "polynomials",
                    .object(
                        listed.map {
                            (String($0), .array(polynomials[$0]!.map { .hex($0.rawRepresentation.revealedBytes()) }))
                        })
                ),
                (
                    "proofNonces",
                    .object(listed.map { (String($0), .hex(proofNonces[$0]!.rawRepresentation.revealedBytes())) })
                ),
            ]
            if !messages.isEmpty {
                out.append(("messages", .object(messages.keys.sorted().map { (String($0), messages[$0]!) })))
            }
            return out
        }
    }

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        func bytes(_ scalar: Scalar) -> [UInt8] { scalar.rawRepresentation.revealedBytes() }

        for curve in Curve.allCases {
            for (threshold, parties) in [(2, 2), (2, 3), (3, 5)] {
                let setup = Setup(
                    curve: curve, walletId: "wallet-dkg-\(curve)-\(threshold)of\(parties)", threshold: threshold,
                    parties: parties, random: random)
                let shares = try DistributedKeyGeneration.run(parties: try (1...parties).map { try setup.party($0) })
                cases.append(
                    CaseBuilder.valid(
                        "\(curve)-\(threshold)of\(parties)",
                        setup.fields + [("shares", .array(shares.map(VectorFixtures.json)))]))
            }

            // Party 2 of a 2-of-3 misbehaves in each way; parties 1 and 3 must refuse.
            let base = Setup(
                curve: curve, walletId: "wallet-dkg-\(curve)-bad", threshold: 2, parties: 3, random: random)
            let honest = try base.honestMessages(2)
            let commitments = honest.commitments.map(\.rawRepresentation)
            let proof = (r: honest.proof.commitment.rawRepresentation, mu: bytes(honest.proof.response))
            let subShares = honest.subShares.mapValues(bytes)
            let one = Scalar(1, curve: curve)

            var setup = base
            setup.replace(
                2, commitments: commitments, proof: (proof.r, bytes(honest.proof.response + one)), subShares: subShares)
            cases.append(CaseBuilder.invalid("\(curve)-proof-response-off-by-one", .dkgProofFailed, setup.fields))

            // Party 2 proves with party 3's index: the challenge binds the identifier.
            setup = base
            let k = Scalar.random(on: curve, using: random)
            let foreign = try DKGProof.prove(secret: base.polynomials[2]![0], index: 3, nonce: k)
            setup.replace(
                2, commitments: commitments, proof: (foreign.commitment.rawRepresentation, bytes(foreign.response)),
                subShares: subShares)
            cases.append(CaseBuilder.invalid("\(curve)-proof-for-another-index", .dkgProofFailed, setup.fields))

            // A proof for a constant term other than the one committed.
            setup = base
            let other = try DKGProof.prove(secret: base.polynomials[2]![0] + one, index: 2, nonce: k)
            setup.replace(
                2, commitments: commitments, proof: (other.commitment.rawRepresentation, bytes(other.response)),
                subShares: subShares)
            cases.append(CaseBuilder.invalid("\(curve)-proof-of-another-secret", .dkgProofFailed, setup.fields))

            setup = base
            var wrong = subShares
            wrong[3] = bytes(honest.subShares[3]! + one)
            setup.replace(2, commitments: commitments, proof: proof, subShares: wrong)
            cases.append(
                CaseBuilder.invalid("\(curve)-sub-share-for-party3-off-by-one", .subShareCheckFailed, setup.fields))

            // Party 2 sends party 1's sub-share to party 3 as well.
            setup = base
            wrong = subShares
            wrong[3] = subShares[1]
            setup.replace(2, commitments: commitments, proof: proof, subShares: wrong)
            cases.append(
                CaseBuilder.invalid("\(curve)-party1-sub-share-sent-to-party3", .subShareCheckFailed, setup.fields))

            setup = base
            setup.replace(2, commitments: Array(commitments.prefix(1)), proof: proof, subShares: subShares)
            cases.append(CaseBuilder.invalid("\(curve)-too-few-commitments", .invalidParameters, setup.fields))

            setup = base
            var broken = commitments
            broken[1] = curve == .secp256k1 ? [0x04] + Array(broken[1].dropFirst()) : [UInt8](repeating: 0, count: 32)
            setup.replace(2, commitments: broken, proof: proof, subShares: subShares)
            cases.append(CaseBuilder.invalid("\(curve)-commitment-not-a-valid-point", .invalidPoint, setup.fields))
        }

        var refused = Setup(curve: .secp256k1, walletId: "wallet-dkg-refused", threshold: 2, parties: 2, random: random)
        refused.threshold = 3
        cases.append(CaseBuilder.invalid("secp256k1-threshold-above-parties", .invalidParameters, refused.fields))
        return cases
    }
}
