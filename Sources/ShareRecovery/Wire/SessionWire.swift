public import ShareCrypto

/// JSON forms of the custodian session messages (the reference server's `/recovery/sessions`
/// endpoints). Sub-shares never travel in clear: each is sealed to the receiving party's ephemeral
/// X25519 key, in addition to whatever the transport does.
public enum SessionWire {
    /// Encodes a plan.
    public static func encode(_ plan: ResharingPlan) -> JSONValue {
        .object([
            ("oldSet", plan.oldSet.jsonValue(includingSecret: false)),
            ("dealers", .array(plan.dealers.map { .number(String($0)) })),
            ("newThreshold", .number(String(plan.newThreshold))),
            ("newParties", .number(String(plan.newParties))),
            ("newKind", .string(plan.newKind.name)),
            ("newGeneration", .number(String(plan.newGeneration))),
            ("newSetId", .string(plan.newSetId.hex)),
        ])
    }

    /// Decodes and re-checks a plan.
    /// - Throws: ``ShareRecoveryError`` (`malformedInput` for shape, then the plan's own checks).
    public static func decodePlan(_ value: JSONValue) throws(ShareRecoveryError) -> ResharingPlan {
        let object = try StrictObject(
            value,
            required: ["oldSet", "dealers", "newThreshold", "newParties", "newKind", "newGeneration", "newSetId"],
            failure: .malformedInput)
        let oldSet = try ShareRecord(jsonValue: try member(value, "oldSet"))
        let dealers = try object.array("dealers").map { (element) throws(ShareRecoveryError) -> Int in
            guard case .number(let text) = element, let index = Int(text), (1...255).contains(index) else {
                throw ShareRecoveryError(.malformedInput, "dealers must be party indices")
            }
            return index
        }
        guard let kind = SetKind(name: try object.string("newKind")) else {
            throw ShareRecoveryError(.malformedInput, "unknown newKind")
        }
        let setId: SetID
        do {
            setId = try SetID(bytes: try object.hex("newSetId", count: SetID.count))
        } catch {
            throw ShareRecoveryError(.malformedInput, error.reason)
        }
        return try ResharingPlan(
            oldSet: oldSet, dealers: dealers,
            newThreshold: Int(try object.integer("newThreshold", maximum: 255, rangeFailure: .invalidParameters)),
            newParties: Int(try object.integer("newParties", maximum: 255, rangeFailure: .invalidParameters)),
            newKind: kind,
            newGeneration: UInt32(
                try object.integer("newGeneration", maximum: UInt64(UInt32.max), rangeFailure: .invalidParameters)),
            newSetId: setId)
    }

    /// Encodes a dealing, sealing each sub-share to its recipient's key. Sub-shares without a
    /// recipient key are left out (they are not for this peer).
    /// - Parameters:
    ///   - dealing: The dealing.
    ///   - recipientKeys: Party index → X25519 public key of that party's holder.
    ///   - random: Source of the sealing's ephemeral keys.
    public static func encode(
        _ dealing: Dealing, sealingTo recipientKeys: [Int: [UInt8]], using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> JSONValue {
        var sealed: [(key: String, value: JSONValue)] = []
        for (party, subShare) in dealing.subShares.sorted(by: { $0.key < $1.key }) {
            guard let key = recipientKeys[party] else { continue }
            let box = try mappingCryptoErrors { try SealedBox.seal(subShare.rawRepresentation, to: key, using: random) }
            sealed.append((String(party), .string(Base64.encode(box))))
        }
        return .object([
            ("dealerIndex", .number(String(dealing.dealerIndex))),
            ("commitments", .array(dealing.commitments.map { .string($0.hex) })),
            ("sealedSubShares", .object(sealed)),
        ])
    }

    /// Decodes a dealing, opening the sub-shares sealed to `keyPair`.
    /// - Throws: ``ShareRecoveryError``: `malformedInput` for shape, `invalidPoint` for a bad commitment,
    ///   `unsealFailed` for a sub-share that does not open, `subShareCheckFailed` for a non-canonical one.
    public static func decodeDealing(_ value: JSONValue, curve: Curve, openingWith keyPair: SealingKeyPair)
        throws(ShareRecoveryError) -> Dealing
    {
        let object = try StrictObject(
            value, required: ["dealerIndex", "commitments", "sealedSubShares"], failure: .malformedInput)
        let dealer = Int(try object.integer("dealerIndex", maximum: 255, rangeFailure: .invalidParameters))
        let commitments = try object.stringArray("commitments").map { (text) throws(ShareRecoveryError) -> Point in
            let bytes = try StrictObject.hex(
                text, count: curve.pointCount, field: "commitments", failure: .malformedInput)
            return try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: curve) }
        }
        guard commitments.count <= 255, case .object(let sealed) = try member(value, "sealedSubShares") else {
            throw ShareRecoveryError(.malformedInput, "sealedSubShares must be an object")
        }
        var subShares: [Int: Scalar] = [:]
        for (party, box) in sealed {
            guard let index = Int(party), (1...255).contains(index), String(index) == party,
                case .string(let text) = box,
                let bytes = Base64.decode(text)
            else {
                throw ShareRecoveryError(.malformedInput, "sealedSubShares maps party indices to base64")
            }
            let opened = try mappingCryptoErrors { try SealedBox.open(bytes, with: keyPair) }
            do {
                subShares[index] = try Scalar(secure: opened, curve: curve)
            } catch {
                throw ShareRecoveryError(
                    .subShareCheckFailed, "dealer \(dealer)'s sub-share for party \(index) is not a scalar")
            }
        }
        return Dealing(dealerIndex: dealer, commitments: commitments, subShares: subShares)
    }

    /// Encodes points as a JSON array of hex strings.
    public static func encode(points: [Point]) -> JSONValue { .array(points.map { .string($0.hex) }) }

    /// Decodes a JSON array of hex points.
    public static func decodePoints(_ value: JSONValue, curve: Curve) throws(ShareRecoveryError) -> [Point] {
        guard case .array(let elements) = value, elements.count <= 255 else {
            throw ShareRecoveryError(.malformedInput, "expected an array of points")
        }
        return try elements.map { (element) throws(ShareRecoveryError) -> Point in
            guard case .string(let text) = element else {
                throw ShareRecoveryError(.malformedInput, "points are hex strings")
            }
            let bytes = try StrictObject.hex(text, count: curve.pointCount, field: "points", failure: .malformedInput)
            return try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: curve) }
        }
    }

    /// A member of a JSON object, or `malformedInput`.
    public static func member(_ value: JSONValue, _ key: String) throws(ShareRecoveryError) -> JSONValue {
        guard case .object(let members) = value, let found = members.first(where: { $0.key == key }) else {
            throw ShareRecoveryError(.malformedInput, "missing \"\(key)\"")
        }
        return found.value
    }
}
