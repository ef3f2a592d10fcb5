import ShareCrypto

extension ShareRecord {
    /// The JSON `format` string of §4.
    public static let jsonFormat = "share-recovery/share@1"
    static let formatPrefix = "share-recovery/share@"

    /// Parses and validates the JSON form (docs/formats.md §4): exact fields (`secret` alone optional,
    /// never `null`), lowercase hex, JSON integers, `publicKey == commitments[0]`, and every §4 check.
    /// - Parameter json: The JSON text.
    /// - Throws: ``ShareRecoveryError``: `malformedRecord` for shape, `unsupportedVersion` for another
    ///   `share@N`, then the value codes of the binary reader, and `publicKeyMismatch`.
    public init(json: String) throws(ShareRecoveryError) {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(json)
        } catch {
            throw ShareRecoveryError(.malformedRecord, "not JSON: \(error)")
        }
        try self.init(jsonValue: value)
    }

    static let jsonFields = [
        "format", "walletId", "curve", "kind", "threshold", "parties", "partyIndex", "generation", "setId",
        "commitments", "publicKey",
    ]

    /// Parses a record from an already parsed JSON value (see ``init(json:)``).
    public init(jsonValue: JSONValue) throws(ShareRecoveryError) {
        let object = try StrictObject(
            jsonValue, required: Self.jsonFields, optional: ["secret"], failure: .malformedRecord)
        try Self.checkFormat(
            try object.string("format"), expected: Self.jsonFormat, prefix: Self.formatPrefix, failure: .malformedRecord
        )
        let walletId = try object.string("walletId")
        guard let curve = Curve(name: try object.string("curve")) else {
            throw ShareRecoveryError(.invalidParameters, "unknown curve")
        }
        guard let kind = SetKind(name: try object.string("kind")) else {
            throw ShareRecoveryError(.invalidParameters, "unknown kind")
        }
        let threshold = Int(try object.integer("threshold", maximum: 255, rangeFailure: .invalidParameters))
        let parties = Int(try object.integer("parties", maximum: 255, rangeFailure: .invalidParameters))
        let index = Int(try object.integer("partyIndex", maximum: 255, rangeFailure: .invalidParameters))
        let generation = UInt32(
            try object.integer("generation", maximum: UInt64(UInt32.max), rangeFailure: .invalidParameters))
        let setId = try SetID(bytes: try object.hex("setId", count: SetID.count))
        let secretBytes = try object.optionalString("secret").map { (text) throws(ShareRecoveryError) -> SecureBytes in
            guard let bytes = Hex.decodeSecret(text), bytes.count == Curve.scalarCount else {
                throw ShareRecoveryError(.malformedRecord, "\"secret\" must be 64 lowercase hex digits")
            }
            return bytes
        }
        let commitmentBytes = try object.stringArray("commitments").map { (text) throws(ShareRecoveryError) in
            try StrictObject.hex(text, count: curve.pointCount, field: "commitments", failure: .malformedRecord)
        }
        let publicKeyBytes = try object.hex("publicKey", count: curve.pointCount)
        try ShareRecord.checkRanges(
            walletIdCount: walletId.utf8.count, threshold: threshold, parties: parties, partyIndex: index)
        guard commitmentBytes.count == threshold else {
            throw ShareRecoveryError(
                .invalidParameters, "\(commitmentBytes.count) commitments for threshold \(threshold)")
        }
        let secret = try secretBytes.map { (bytes) throws(ShareRecoveryError) in
            try mappingCryptoErrors { try Scalar(secret: bytes, curve: curve) }
        }
        let commitments = try commitmentBytes.map { (bytes) throws(ShareRecoveryError) in
            try mappingCryptoErrors { try Point(rawRepresentation: bytes, curve: curve) }
        }
        guard publicKeyBytes == commitmentBytes[0] else {
            throw ShareRecoveryError(.publicKeyMismatch, "publicKey is not commitments[0]")
        }
        try self.init(
            walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties, partyIndex: index,
            generation: generation, setId: setId, secret: secret, commitments: commitments)
    }

    /// A `format` field must be exactly `expected`; another version of the same document is
    /// `unsupportedVersion`, anything else the caller's shape error.
    static func checkFormat(_ format: String, expected: String, prefix: String, failure: ShareRecoveryError.Code)
        throws(ShareRecoveryError)
    {
        guard format != expected else { return }
        if format.hasPrefix(prefix) { throw ShareRecoveryError(.unsupportedVersion, "format \"\(format)\"") }
        throw ShareRecoveryError(failure, "format must be \"\(expected)\"")
    }

    /// The JSON form as a value. The secret is included only when `includingSecret` is true and the record has one.
    public func jsonValue(includingSecret: Bool) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("format", .string(Self.jsonFormat)),
            ("walletId", .string(walletId)),
            ("curve", .string(curve.name)),
            ("kind", .string(kind.name)),
            ("threshold", .number(String(threshold))),
            ("parties", .number(String(parties))),
            ("partyIndex", .number(String(partyIndex))),
            ("generation", .number(String(generation))),
            ("setId", .string(setId.hex)),
        ]
        if includingSecret, let secret {
            members.append(("secret", .string(Hex.encode(secret.rawRepresentation.revealedBytes()))))
        }
        members.append(("commitments", .array(commitments.map { .string($0.hex) })))
        members.append(("publicKey", .string(publicKey.hex)))
        return .object(members)
    }

    /// The JSON text. Without `includingSecret` this is the public description, safe to log.
    public func json(includingSecret: Bool = false) -> String {
        JSONWriter.write(jsonValue(includingSecret: includingSecret))
    }
}
