import ShareCrypto
import ShareRecovery

/// `signing.json`: docs/formats.md §11 threshold signing in its three modes, every nonce explicit.
enum SigningVectors: VectorKind {
    static let kind = "signing"
    static let summary =
        "docs/formats.md §11 FROST signing. The signers are the parties of shares (§4 JSON with secrets, one signing set); "
        + "party i's round-1 nonce pair is nonces[i] {hiding, binding} (RFC 9591 d, e; the BIP draft's k1, k2), so its "
        + "commitments are their multiples of G. Every signer signs message (hex) in mode; the signature shares are "
        + "verified, then aggregated. A valid case gives commitments, signatureShares and the signature. An invalid "
        + "case may give signatureShares for some signers, used instead of theirs; a party listed twice in shares "
        + "signs twice with its one nonce. The first failure, in the order shares lists the signers, is the named error."
    static let fields: Set<String> = [
        "curve", "mode", "shares", "message", "nonces", "commitments", "signatureShares", "signature",
    ]

    /// What a case computes.
    struct Outcome {
        var commitments: [Int: FrostNonceCommitment]
        var signatureShares: [Int: Scalar]
        var signature: [UInt8]
    }

    // MARK: Verification

    static func run(_ vector: VectorCase) throws -> Outcome {
        let curveName = try vector.string("curve")
        guard let curve = Curve(name: curveName) else { throw VectorProblem("unknown curve \"\(curveName)\"") }
        let modeName = try vector.string("mode")
        guard let mode = SigningMode(rawValue: modeName) else { throw VectorProblem("unknown mode \"\(modeName)\"") }
        let shares = try vector.array("shares").map { try ShareRecord(json: JSONWriter.write($0)) }
        guard let first = shares.first, shares.allSatisfy({ $0.curve == curve && $0.secret != nil }) else {
            throw VectorProblem("shares must be non-empty, on \(curve), with secrets")
        }
        let message = try vector.hex("message")
        var nonces: [Int: FrostSigningNonce] = [:]
        for (index, value) in try vector.indexed("nonces") {
            guard case .string(let hiding)? = value["hiding"], case .string(let binding)? = value["binding"] else {
                throw VectorProblem("nonces[\(index)] must be {hiding, binding}")
            }
            let pair = try [hiding, binding].map { (text) throws in
                let bytes = try VectorCase.hex(text, field: "nonces")
                return try mappingCryptoErrors { try Scalar(rawRepresentation: bytes, curve: curve) }
            }
            nonces[index] = try mappingCryptoErrors { try FrostSigningNonce(hiding: pair[0], binding: pair[1]) }
        }
        // Shares of another set or generation are refused before any nonce is used, as a signer would.
        for share in shares where !share.isSameSet(as: first) {
            throw ShareRecoveryError(
                .invalidParameters, "party \(share.partyIndex)'s share is of another set or generation",
                party: share.partyIndex)
        }
        let signers = try shares.map { try SigningParty(share: $0, mode: mode) }
        var commitments: [Int: FrostNonceCommitment] = [:]
        for signer in signers {
            guard let nonce = nonces[signer.share.partyIndex] else {
                throw VectorProblem("no nonce for party \(signer.share.partyIndex)")
            }
            commitments[signer.share.partyIndex] = nonce.commitment
        }
        let package = try SigningPackage(signingSet: first, message: message, mode: mode, commitments: commitments)
        let given = vector.has("signatureShares") ? try vector.indexed("signatureShares") : [:]
        var signatureShares: [Int: Scalar] = [:]
        for signer in signers {
            let index = signer.share.partyIndex
            if let value = given[index] {
                guard case .string(let text) = value else {
                    throw VectorProblem("signatureShares must hold hex strings")
                }
                let bytes = try VectorCase.hex(text, field: "signatureShares")
                signatureShares[index] = try mappingCryptoErrors {
                    try FrostSignatureShare.parse(bytes, curve: curve, party: index)
                }
            } else {
                signatureShares[index] = try signer.sign(nonce: nonces[index]!, package: package)
            }
        }
        return Outcome(
            commitments: commitments, signatureShares: signatureShares,
            signature: try package.aggregate(signatureShares: signatureShares))
    }

    static func checkValid(_ vector: VectorCase) throws {
        let outcome = try run(vector)
        for (index, value) in try vector.indexed("commitments") {
            guard value.sortedKeys == commitmentJSON(outcome.commitments[index]).sortedKeys else {
                throw VectorProblem("party \(index)'s commitments differ")
            }
        }
        guard try Set(vector.indexed("commitments").keys) == Set(outcome.commitments.keys) else {
            throw VectorProblem("commitments must list exactly the signers")
        }
        let listed = try vector.indexed("signatureShares")
        guard Set(listed.keys) == Set(outcome.signatureShares.keys) else {
            throw VectorProblem("signatureShares must list exactly the signers")
        }
        for (index, value) in listed
        where value != .hex(outcome.signatureShares[index]!.rawRepresentation.revealedBytes()) {
            throw VectorProblem("party \(index)'s signature share differs")
        }
        guard try vector.hex("signature") == outcome.signature else { throw VectorProblem("the signature differs") }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        guard !vector.has("signature"), !vector.has("commitments") else {
            throw VectorProblem("an invalid case has no commitments or signature")
        }
        _ = try run(vector)
    }

    static func commitmentJSON(_ commitment: FrostNonceCommitment?) -> JSONValue {
        guard let commitment else { return .null }
        return .object([("hiding", .string(commitment.hiding.hex)), ("binding", .string(commitment.binding.hex))])
    }

    // MARK: Generation

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        func bytes(_ scalar: Scalar) -> [UInt8] { scalar.rawRepresentation.revealedBytes() }
        func fields(
            _ curve: Curve, _ mode: SigningMode, _ shares: [ShareRecord], _ message: [UInt8],
            _ nonces: [Int: (Scalar, Scalar)]
        )
            -> [(key: String, value: JSONValue)]
        {
            [
                ("curve", .string(curve.name)), ("mode", .string(mode.rawValue)),
                ("shares", .array(shares.map(VectorFixtures.json))), ("message", .hex(message)),
                (
                    "nonces",
                    .object(
                        nonces.keys.sorted().map { i in
                            (
                                String(i),
                                .object([("hiding", .hex(bytes(nonces[i]!.0))), ("binding", .hex(bytes(nonces[i]!.1)))])
                            )
                        })
                ),
            ]
        }
        func drawNonces(_ curve: Curve, _ parties: [Int]) -> [Int: (Scalar, Scalar)] {
            Dictionary(
                uniqueKeysWithValues: parties.map {
                    ($0, (Scalar.random(on: curve, using: random), Scalar.random(on: curve, using: random)))
                })
        }
        func signatureSharesJSON(_ shares: [Int: Scalar]) -> JSONValue {
            .object(shares.keys.sorted().map { (String($0), .hex(bytes(shares[$0]!))) })
        }
        /// A valid case: the inputs and what running them gives.
        func valid(_ id: String, _ inputs: [(key: String, value: JSONValue)]) throws -> Outcome {
            let outcome = try run(try VectorCase(CaseBuilder.valid(id, inputs), fields: SigningVectors.fields))
            cases.append(
                CaseBuilder.valid(
                    id,
                    inputs + [
                        (
                            "commitments",
                            .object(
                                outcome.commitments.keys.sorted().map {
                                    (String($0), commitmentJSON(outcome.commitments[$0]))
                                })
                        ),
                        ("signatureShares", signatureSharesJSON(outcome.signatureShares)),
                        ("signature", .hex(outcome.signature)),
                    ]))
            return outcome
        }

        let combinations: [(Curve, SigningMode)] = [
            (.ed25519, .rfc9591), (.secp256k1, .bip340), (.secp256k1, .rfc9591),
        ]
        for (curve, mode) in combinations {
            for (threshold, parties) in [(2, 2), (2, 3), (3, 5)] {
                let set = try DistributedKeyGeneration.run(
                    parameters: DKGParameters(
                        curve: curve, walletId: "wallet-sign-\(curve)-\(threshold)of\(parties)", threshold: threshold,
                        parties: parties),
                    using: random)
                // The last t parties sign: a signer set other than 1…t exercises the Lagrange coefficients.
                let signers = Array(set.suffix(threshold))
                let message = random.bytes(count: 32)
                let nonces = drawNonces(curve, signers.map(\.partyIndex))
                let base = fields(curve, mode, signers, message, nonces)
                let id = "\(curve)-\(mode)-\(threshold)of\(parties)"
                let outcome = try valid(id, base)
                guard threshold == 2, parties == 3 else { continue }

                // The second signer's share off by one: aggregation names it.
                let bad = signers[1].partyIndex
                cases.append(
                    CaseBuilder.invalid(
                        "\(id)-signature-share-off-by-one", .invalidSignatureShare,
                        base + [
                            (
                                "signatureShares",
                                signatureSharesJSON([bad: outcome.signatureShares[bad]! + Scalar(1, curve: curve)])
                            )
                        ]))
                // The first signer asked to sign twice with one commitment.
                cases.append(
                    CaseBuilder.invalid(
                        "\(id)-signer-asked-twice", .nonceReused,
                        fields(curve, mode, signers + [signers[0]], message, nonces)))
                // The empty message signs like any other.
                _ = try valid("\(id)-empty-message", fields(curve, mode, signers, [], nonces))
                // A share of the set before a recovery beside one of the recovered set.
                let recovered = try Resharing.reshare(
                    Array(set.prefix(threshold)), newThreshold: threshold, newParties: parties, newKind: .signing,
                    newGeneration: 1,
                    using: random)
                cases.append(
                    CaseBuilder.invalid(
                        "\(id)-old-generation-share", .invalidParameters,
                        fields(curve, mode, [set[0], recovered[1]], message, drawNonces(curve, [1, 2]))))
            }
        }
        let ed = try DistributedKeyGeneration.run(
            parameters: DKGParameters(
                curve: .ed25519, walletId: "wallet-sign-ed25519-bip340", threshold: 2, parties: 2), using: random)
        cases.append(
            CaseBuilder.invalid(
                "ed25519-bip340-is-not-a-mode-of-ed25519", .invalidParameters,
                fields(.ed25519, .bip340, ed, [1, 2, 3], drawNonces(.ed25519, [1, 2]))))
        let secp = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: "wallet-sign-too-few", threshold: 2, parties: 3),
            using: random)
        cases.append(
            CaseBuilder.invalid(
                "secp256k1-bip340-too-few-signers", .invalidParameters,
                fields(.secp256k1, .bip340, [secp[0]], [1, 2, 3], drawNonces(.secp256k1, [1]))))
        return cases
    }
}
