import ShareCrypto
import TestSupport
import Testing

/// `frost/rfc9591-poc/frost-*.json` (RFC 9591 Appendix E): only the key-generation inputs are used.
private struct RFC9591File: Decodable, Sendable {
    struct Config: Decodable, Sendable {
        let MAX_PARTICIPANTS: String
        let MIN_PARTICIPANTS: String
        let group: String
    }
    struct Inputs: Decodable, Sendable {
        struct Share: Decodable, Sendable {
            let identifier: Int
            let participant_share: HexBytes
        }
        let group_secret_key: HexBytes
        let group_public_key: HexBytes
        let share_polynomial_coefficients: [HexBytes]
        let participant_shares: [Share]
    }
    let config: Config
    let inputs: Inputs
}

private func curve(named group: String) throws -> Curve {
    try #require(Curve(name: group.lowercased()), "unknown group \(group)")
}

@Suite("FROST key-generation vectors")
struct FrostShareVectorTests {
    @Test(
        "RFC 9591 App. E: shares are f(i) of the listed polynomial, and the group key is secret·G",
        arguments: ["frost/rfc9591-poc/frost-secp256k1-sha256.json", "frost/rfc9591-poc/frost-ed25519-sha512.json"])
    func rfc9591Shares(path: String) throws {
        let file = try VectorFile.load(path, as: RFC9591File.self)
        let curve = try curve(named: file.config.group)
        let inputs = file.inputs
        let secret = try Scalar(rawRepresentation: inputs.group_secret_key.bytes, curve: curve)
        let coefficients =
            try [secret]
            + inputs.share_polynomial_coefficients.map { try Scalar(rawRepresentation: $0.bytes, curve: curve) }
        #expect(coefficients.count == Int(file.config.MIN_PARTICIPANTS))
        let polynomial = try Polynomial(coefficients: coefficients)
        #expect(polynomial.evaluate(at: Scalar(0, curve: curve)) == secret)

        #expect(try Point(generatorTimes: secret).rawRepresentation == inputs.group_public_key.bytes)
        let commitments = try polynomial.commitments()
        #expect(commitments[0].rawRepresentation == inputs.group_public_key.bytes)

        for share in inputs.participant_shares {
            let context = Comment(rawValue: "\(path) participant \(share.identifier)")
            let expected = try Scalar(rawRepresentation: share.participant_share.bytes, curve: curve)
            let computed = polynomial.evaluate(atIndex: share.identifier)
            #expect(computed.rawRepresentation.revealedBytes() == share.participant_share.bytes, context)
            // The Feldman check docs/formats.md §2 applies to every share.
            #expect(
                try Point(generatorTimes: expected)
                    == Shamir.publicShare(index: share.identifier, commitments: commitments), context)
        }
        #expect(inputs.participant_shares.count == Int(file.config.MAX_PARTICIPANTS))
        VectorFile.report(path, cases: inputs.participant_shares.count)
    }

    @Test(
        "zcash-frost DKG: every received sub-share passes the Feldman check, and a flipped byte fails it",
        arguments: ["frost/zcash-frost/secp256k1/vectors_dkg.json", "frost/zcash-frost/ed25519/vectors_dkg.json"])
    func zcashDKGSubShares(path: String) throws {
        let file = try VectorFile.load(path, as: ZcashDKGFile.self)
        let curve = try curve(named: file.config.group)
        let participants = file.inputs.participants
        #expect(participants.count == file.config.MAX_PARTICIPANTS)
        // The least significant byte in the curve's scalar encoding: flipping its low bit keeps a scalar canonical.
        let lowByte = curve == .secp256k1 ? Curve.scalarCount - 1 : 0

        var dealt: [Int: (polynomial: Polynomial, commitments: [Point])] = [:]
        for dealer in participants {
            let commitments = try dealer.vss_commitments.map { try Point(rawRepresentation: $0.bytes, curve: curve) }
            #expect(commitments.count == file.config.MIN_PARTICIPANTS)
            let polynomial = try Polynomial(coefficients: [
                Scalar(rawRepresentation: dealer.signing_key.bytes, curve: curve),
                Scalar(rawRepresentation: dealer.coefficient.bytes, curve: curve),
            ])
            // The published commitments are those of the dealt polynomial.
            #expect(try polynomial.commitments() == commitments, "dealer \(dealer.identifier)")
            dealt[dealer.identifier] = (polynomial, commitments)
        }

        var count = 0
        var tamperedCommitmentsRejected = 0
        for receiver in participants {
            #expect(receiver.signing_shares.count == participants.count - 1)
            for (senderKey, subShare) in receiver.signing_shares {
                count += 1
                let sender = try #require(Int(senderKey))
                let (polynomial, commitments) = try #require(dealt[sender], "unknown sender \(sender)")
                let context = Comment(rawValue: "\(path) dealer \(sender) → receiver \(receiver.identifier)")
                let expectedPublic = try Shamir.publicShare(index: receiver.identifier, commitments: commitments)

                let share = try Scalar(rawRepresentation: subShare.bytes, curve: curve)
                #expect(polynomial.evaluate(atIndex: receiver.identifier) == share, context)
                #expect(try Point(generatorTimes: share) == expectedPublic, context)

                var flipped = subShare.bytes
                flipped[lowByte] ^= 0x01
                let flippedShare = try Scalar(rawRepresentation: flipped, curve: curve)
                #expect(try Point(generatorTimes: flippedShare) != expectedPublic, context)

                // Every byte of every commitment: the tampered point either does not parse or fails the check.
                let encoded = try #require(participants.first { $0.identifier == sender }).vss_commitments
                for (k, commitment) in encoded.enumerated() {
                    for position in commitment.bytes.indices {
                        var tampered = commitment.bytes
                        tampered[position] ^= 0x01
                        guard let point = try? Point(rawRepresentation: tampered, curve: curve) else {
                            tamperedCommitmentsRejected += 1
                            continue
                        }
                        var tamperedCommitments = commitments
                        tamperedCommitments[k] = point
                        let tamperedPublic = try? Shamir.publicShare(
                            index: receiver.identifier, commitments: tamperedCommitments)
                        #expect(tamperedPublic != expectedPublic, "\(context), commitment \(k) byte \(position)")
                    }
                }
            }
        }

        // Beyond the sub-shares: the group key is Σ_j A_{j,0}, and each participant's final share
        // x_i = Σ_j f_j(i) matches its verifying share X_i = Σ_j Σ_k i^k·A_{j,k}.
        let groupKey = try Point.sum(participants.map { try #require(dealt[$0.identifier]).commitments[0] })
        #expect(groupKey.rawRepresentation == file.inputs.verifying_key.bytes)
        for participant in participants {
            let context = Comment(rawValue: "participant \(participant.identifier)")
            let share = try Scalar(rawRepresentation: participant.signing_share.bytes, curve: curve)
            let verifying = try Point(rawRepresentation: participant.verifying_share.bytes, curve: curve)
            #expect(try Point(generatorTimes: share) == verifying, context)
            var sum = try #require(dealt[participant.identifier]).polynomial.evaluate(atIndex: participant.identifier)
            for subShare in participant.signing_shares.values {
                sum = sum + (try Scalar(rawRepresentation: subShare.bytes, curve: curve))
            }
            #expect(sum == share, context)
            let summed = try Point.sum(
                participants.map {
                    try Shamir.publicShare(
                        index: participant.identifier, commitments: #require(dealt[$0.identifier]).commitments)
                })
            #expect(summed == verifying, context)
        }

        print("\(path): \(tamperedCommitmentsRejected) tampered commitments failed to parse, the rest failed the check")
        VectorFile.report(path, cases: count)
    }
}
