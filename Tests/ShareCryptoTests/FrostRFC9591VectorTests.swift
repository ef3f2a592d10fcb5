import ShareCrypto
import TestSupport
import Testing

/// RFC 9591 Appendix E vectors (`frost/rfc9591-poc`) and frost-core's (`frost/zcash-frost/*/vectors.json`):
/// one 2-of-3 signing session with every intermediate value.
private struct RFC9591SigningFile: Decodable, Sendable {
    struct Config: Decodable, Sendable {
        let NUM_PARTICIPANTS: String
        let group: String
    }
    struct Share: Decodable, Sendable {
        let identifier: Int
        let participant_share: HexBytes
    }
    struct Inputs: Decodable, Sendable {
        let participant_list: [Int]
        let group_secret_key: HexBytes
        /// `group_public_key` in the RFC's file, `verifying_key_key` in frost-core's.
        let groupKey: HexBytes
        let message: HexBytes
        let participant_shares: [Share]

        private enum CodingKeys: String, CodingKey {
            case participant_list, group_secret_key, group_public_key, verifying_key_key, message, participant_shares
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            participant_list = try container.decode([Int].self, forKey: .participant_list)
            group_secret_key = try container.decode(HexBytes.self, forKey: .group_secret_key)
            groupKey =
                try container.decodeIfPresent(HexBytes.self, forKey: .group_public_key)
                ?? container.decode(HexBytes.self, forKey: .verifying_key_key)
            message = try container.decode(HexBytes.self, forKey: .message)
            participant_shares = try container.decode([Share].self, forKey: .participant_shares)
        }
    }
    struct RoundOne: Decodable, Sendable {
        let identifier: Int
        let hiding_nonce_randomness: HexBytes
        let binding_nonce_randomness: HexBytes
        let hiding_nonce: HexBytes
        let binding_nonce: HexBytes
        let hiding_nonce_commitment: HexBytes
        let binding_nonce_commitment: HexBytes
        let binding_factor_input: HexBytes
        let binding_factor: HexBytes
    }
    struct RoundTwo: Decodable, Sendable {
        let identifier: Int
        let sig_share: HexBytes
    }
    struct Outputs<Element: Decodable & Sendable>: Decodable, Sendable { let outputs: [Element] }
    struct Final: Decodable, Sendable { let sig: HexBytes }

    let config: Config
    let inputs: Inputs
    let round_one_outputs: Outputs<RoundOne>
    let round_two_outputs: Outputs<RoundTwo>
    let final_output: Final
}

@Suite("FROST signing, RFC 9591 (mode rfc9591)")
struct FrostRFC9591VectorTests {
    static let files = [
        "frost/rfc9591-poc/frost-ed25519-sha512.json", "frost/rfc9591-poc/frost-secp256k1-sha256.json",
        "frost/zcash-frost/ed25519/vectors.json", "frost/zcash-frost/secp256k1/vectors.json",
    ]

    @Test(
        "every intermediate: nonces from the given randomness, commitments, binding factors, shares, signature",
        arguments: files)
    func vectors(path: String) throws {
        let file = try VectorFile.load(path, as: RFC9591SigningFile.self)
        let curve = try #require(Curve(name: file.config.group.lowercased()))
        let inputs = file.inputs
        let groupKey = try Point(rawRepresentation: inputs.groupKey.bytes, curve: curve)
        #expect(
            try Point(generatorTimes: Scalar(rawRepresentation: inputs.group_secret_key.bytes, curve: curve))
                == groupKey)
        var shares: [Int: Scalar] = [:]
        for share in inputs.participant_shares {
            shares[share.identifier] = try Scalar(secret: share.participant_share.secure, curve: curve)
        }
        let publicShares = try shares.mapValues { try Point(generatorTimes: $0) }
        #expect(file.round_one_outputs.outputs.map(\.identifier) == inputs.participant_list)
        #expect(inputs.participant_list.count == Int(file.config.NUM_PARTICIPANTS))

        // Round one: nonce_generate from the published randomness, hiding first.
        var nonces: [Int: FrostSigningNonce] = [:]
        var commitments: [Int: FrostNonceCommitment] = [:]
        for output in file.round_one_outputs.outputs {
            let context = Comment(rawValue: "\(path) participant \(output.identifier)")
            let share = try #require(shares[output.identifier])
            let random = FixedRandom([output.hiding_nonce_randomness.bytes, output.binding_nonce_randomness.bytes])
            let nonce = FrostRFC9591.generateNonce(share: share, using: random)
            #expect(random.isExhausted, context)
            let expected = try FrostNonceCommitment(
                hiding: Point(rawRepresentation: output.hiding_nonce_commitment.bytes, curve: curve),
                binding: Point(rawRepresentation: output.binding_nonce_commitment.bytes, curve: curve))
            #expect(nonce.commitment == expected, context)
            // k ↦ k·G is injective below the order: equal commitments mean the generated nonces are the published ones.
            let published = try FrostSigningNonce(
                hiding: Scalar(rawRepresentation: output.hiding_nonce.bytes, curve: curve),
                binding: Scalar(rawRepresentation: output.binding_nonce.bytes, curve: curve))
            #expect(published.commitment == expected, context)
            nonces[output.identifier] = nonce
            commitments[output.identifier] = nonce.commitment
        }

        let package = try FrostSigningPackage(
            groupKey: groupKey, message: inputs.message.bytes, commitments: commitments)
        let inputsByParty = FrostRFC9591.bindingFactorInputs(package)
        let values = try FrostRFC9591.sessionValues(package)
        for output in file.round_one_outputs.outputs {
            let context = Comment(rawValue: "\(path) participant \(output.identifier)")
            #expect(inputsByParty[output.identifier] == output.binding_factor_input.bytes, context)
            #expect(
                values.bindingFactors[output.identifier]?.rawRepresentation.revealedBytes()
                    == output.binding_factor.bytes, context)
        }

        // Round two.
        var signatureShares: [Int: Scalar] = [:]
        for output in file.round_two_outputs.outputs {
            let context = Comment(rawValue: "\(path) participant \(output.identifier)")
            let nonce = try #require(nonces[output.identifier])
            let share = try #require(shares[output.identifier])
            let z = try FrostRFC9591.sign(nonce: nonce, share: share, index: output.identifier, package: package)
            #expect(z.rawRepresentation.revealedBytes() == output.sig_share.bytes, context)
            #expect(nonce.isConsumed, context)
            #expect(throws: ShareCryptoError(.nonceReused, ""), context) {
                try FrostRFC9591.sign(nonce: nonce, share: share, index: output.identifier, package: package)
            }
            #expect(
                FrostRFC9591.verifySignatureShare(
                    z, index: output.identifier, publicShare: try #require(publicShares[output.identifier]),
                    package: package,
                    values: values), context)
            signatureShares[output.identifier] = z
        }

        let signature = try FrostRFC9591.aggregate(
            signatureShares: signatureShares, publicShares: publicShares, package: package)
        #expect(signature == file.final_output.sig.bytes, "\(path)")
        #expect(FrostRFC9591.verify(signature: signature, message: inputs.message.bytes, groupKey: groupKey))
        var forged = signature
        forged[forged.count - 1] ^= 0x01
        #expect(!FrostRFC9591.verify(signature: forged, message: inputs.message.bytes, groupKey: groupKey))
        #expect(!FrostRFC9591.verify(signature: signature, message: inputs.message.bytes + [0], groupKey: groupKey))

        // Each signer's share replaced in turn by a wrong one: aggregation names that signer.
        for index in inputs.participant_list {
            var tampered = signatureShares
            tampered[index] = try #require(signatureShares[index]) + Scalar(1, curve: curve)
            let error = try #require(throws: ShareCryptoError.self) {
                try FrostRFC9591.aggregate(signatureShares: tampered, publicShares: publicShares, package: package)
            }
            #expect(error.code == .invalidSignatureShare && error.party == index, "\(path) tampered party \(index)")
        }
        VectorFile.report(path, cases: file.round_one_outputs.outputs.count + file.round_two_outputs.outputs.count + 1)
    }
}
