public import ShareCrypto

/// The JSON forms of the DKG and signing messages that cross a network (the reference server's
/// `/wallets` routes and their clients). Points and scalars are lowercase hex in the curve's §1
/// encoding; every decoder refuses unknown members and names the party whose message it could not read.
public enum ProtocolWire {
    // MARK: DKG

    /// A round-1 broadcast: `{"commitments": [hex], "proof": {"R": hex, "mu": hex}}`.
    public static func encode(_ message: DKGRound1Message) -> JSONValue {
        .object([
            ("commitments", SessionWire.encode(points: message.commitments)),
            (
                "proof",
                .object([
                    ("R", .string(message.proof.commitment.hex)),
                    ("mu", .string(Hex.encode(message.proof.response.rawRepresentation.revealedBytes()))),
                ])
            ),
        ])
    }

    /// Decodes a round-1 broadcast from `sender`.
    /// - Throws: `malformedInput` for the wrong shape; `invalidPoint` for a commitment that is not a
    ///   §1 point; `dkgProofFailed` naming the sender for a proof that does not parse.
    public static func decodeRound1(_ value: JSONValue, sender: Int, curve: Curve) throws(ShareRecoveryError)
        -> DKGRound1Message
    {
        let fields = try StrictObject(value, required: ["commitments", "proof"], failure: .malformedInput)
        let commitments = try SessionWire.decodePoints(try fields.value("commitments"), curve: curve)
        let proofFields = try StrictObject(try fields.value("proof"), required: ["R", "mu"], failure: .malformedInput)
        let proofBytes =
            try proofFields.hex("R", count: curve.pointCount) + proofFields.hex("mu", count: Curve.scalarCount)
        let proof = try mappingCryptoErrors { try DKGProof(rawRepresentation: proofBytes, curve: curve, party: sender) }
        return DKGRound1Message(sender: sender, commitments: commitments, proof: proof)
    }

    // MARK: Signing

    /// A nonce commitment: `{"hiding": hex, "binding": hex}`.
    public static func encode(_ commitment: FrostNonceCommitment) -> JSONValue {
        .object([("hiding", .string(commitment.hiding.hex)), ("binding", .string(commitment.binding.hex))])
    }

    /// Decodes a nonce commitment sent by `party`.
    /// - Throws: `malformedInput` for the wrong shape; `invalidPoint` naming the party for a bad point.
    public static func decodeCommitment(_ value: JSONValue, party: Int, curve: Curve) throws(ShareRecoveryError)
        -> FrostNonceCommitment
    {
        let fields = try StrictObject(value, required: ["hiding", "binding"], failure: .malformedInput)
        let bytes = try fields.hex("hiding", count: curve.pointCount) + fields.hex("binding", count: curve.pointCount)
        return try mappingCryptoErrors {
            try FrostNonceCommitment(rawRepresentation: bytes, curve: curve, party: party)
        }
    }

    /// A signature share: 32-byte hex.
    public static func encode(signatureShare: Scalar) -> JSONValue {
        .string(Hex.encode(signatureShare.rawRepresentation.revealedBytes()))
    }

    /// Decodes `party`'s signature share.
    /// - Throws: `invalidSignatureShare` naming the party for anything but a scalar below the order.
    public static func decodeSignatureShare(_ value: JSONValue, party: Int, curve: Curve) throws(ShareRecoveryError)
        -> Scalar
    {
        guard case .string(let text) = value, let bytes = Hex.decode(text) else {
            throw ShareRecoveryError(
                .invalidSignatureShare, "party \(party)'s signature share is not hex", party: party)
        }
        return try mappingCryptoErrors { try FrostSignatureShare.parse(bytes, curve: curve, party: party) }
    }
}
