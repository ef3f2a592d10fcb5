import ShareCrypto
import ShareRecovery

/// `custodian-share.json`: the custodian backup share of §6.
enum CustodianShareVectors: VectorKind {
    static let kind = "custodian-share"
    static let summary =
        "docs/formats.md §6 custodian backup shares. custodianShare is the JSON text as stored; custodianSecretKey is "
        + "the X25519 secret key it is sealed to. A valid case parses, re-serialises to exactly custodianShare, "
        + "unseals to recordHex, and that record agrees with the JSON. An invalid case must be refused, by parsing "
        + "or by unsealing and cross-checking, with the named error."
    static let fields: Set<String> = ["custodianShare", "custodianSecretKey", "recordHex"]

    // MARK: Verification

    static func keyPair(_ vector: VectorCase) throws -> SealingKeyPair {
        do {
            return try SealingKeyPair(secretKey: SecureBytes(copying: try vector.hex("custodianSecretKey")))
        } catch let error as ShareCryptoError {
            throw VectorProblem("custodianSecretKey is unusable: \(error)")
        }
    }

    static func checkValid(_ vector: VectorCase) throws {
        let text = try vector.string("custodianShare")
        let keyPair = try keyPair(vector)
        let share = try CustodianBackupShare(json: text)
        guard share.json == text else { throw VectorProblem("custodianShare does not re-serialise to itself") }
        let record = try share.open(with: keyPair)
        guard try VectorFixtures.binary(record) == (try vector.hex("recordHex")) else {
            throw VectorProblem("the sealed record is not recordHex")
        }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        let keyPair = try keyPair(vector)
        let share = try CustodianBackupShare(json: try vector.string("custodianShare"))
        _ = try share.open(with: keyPair)
    }

    // MARK: Generation

    /// A custodian share's JSON with some members changed.
    static func edited(_ share: CustodianBackupShare, _ edit: (JSONValue) -> JSONValue) throws -> String {
        JSONWriter.write(edit(try VectorFixtures.parse(share.json)))
    }

    /// A §6 JSON text describing `record` whose sealed share is `sealed`.
    static func text(
        describing record: ShareRecord, method: BackupMethod, sealed: [UInt8],
        createdAt: String = VectorFixtures.createdAt
    )
        -> String
    {
        JSONWriter.write(
            .object([
                ("format", .string(CustodianBackupShare.jsonFormat)),
                ("walletId", .string(record.walletId)),
                ("curve", .string(record.curve.name)),
                ("backupMethod", .string(method.name)),
                ("setId", .string(record.setId.hex)),
                ("generation", .integer(record.generation)),
                ("threshold", .integer(record.threshold)),
                ("parties", .integer(record.parties)),
                ("partyIndex", .integer(record.partyIndex)),
                ("commitments", .array(record.commitments.map { .string($0.hex) })),
                ("sealedShare", .string(Base64.encode(sealed))),
                ("createdAt", .string(createdAt)),
            ]))
    }

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        let custodian = SealingKeyPair(using: random)
        let other = SealingKeyPair(using: random)
        let secretKey: JSONValue = .hex(custodian.secretKey.revealedBytes())

        func seal(_ record: ShareRecord, _ method: BackupMethod, createdAt: String = VectorFixtures.createdAt) throws
            -> CustodianBackupShare
        {
            try CustodianBackupShare(
                sealing: record, method: method, custodianPublicKey: custodian.publicKey, createdAt: createdAt,
                using: random)
        }
        func valid(_ id: String, _ share: CustodianBackupShare, _ record: ShareRecord) throws {
            cases.append(
                CaseBuilder.valid(
                    id,
                    [
                        ("custodianShare", .string(share.json)), ("custodianSecretKey", secretKey),
                        ("recordHex", .hex(try VectorFixtures.binary(record))),
                    ]))
        }
        func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ text: String) {
            cases.append(
                CaseBuilder.invalid(id, error, [("custodianShare", .string(text)), ("custodianSecretKey", secretKey)]))
        }

        // One backup set per method, as a wallet has.
        let layouts: [(BackupMethod, Curve, Int, Int, String)] = [
            (.password, .secp256k1, 2, 2, "wallet-secp256k1-cs"), (.passkey, .ed25519, 2, 3, "wallet-ed25519-cs"),
            (.iCloud, .secp256k1, 2, 3, "wallet-secp256k1-cs"), (.googleDrive, .ed25519, 2, 2, "wallet-ed25519-cs"),
            (.cloudKey, .secp256k1, 2, 2, "wallet-secp256k1-cs"),
            (.recoveryCode, .ed25519, 2, 2, "wallet-\u{E9}t\u{E9}-cs"),
        ]
        var sets: [BackupMethod: [ShareRecord]] = [:]
        var shares: [BackupMethod: [Int: CustodianBackupShare]] = [:]
        for (generation, (method, curve, threshold, parties, walletId)) in layouts.enumerated() {
            let set = try VectorFixtures.dealSet(
                curve: curve, walletId: walletId, kind: .backup, threshold: threshold, parties: parties,
                generation: UInt32(generation), random: random)
            sets[method] = set
            for record in set.dropFirst() {
                let createdAt = method == .cloudKey ? "2026-01-01T00:00:00.125Z" : VectorFixtures.createdAt
                let share = try seal(record, method, createdAt: createdAt)
                shares[method, default: [:]][record.partyIndex] = share
                try valid("\(curve)-\(threshold)of\(parties)-\(method.name)-party\(record.partyIndex)", share, record)
            }
        }

        let base = shares[.password]![2]!, baseRecord = sets[.password]![1]
        let wide = shares[.passkey]![2]!
        func edit(_ change: (JSONValue) -> JSONValue) throws -> String { try edited(base, change) }

        // Shape and ranges.
        invalid("malformed-json-truncated", .malformedCustodianShare, String(base.json.dropLast(10)))
        invalid("json-not-an-object", .malformedCustodianShare, "[" + base.json + "]")
        invalid("json-duplicate-key", .malformedCustodianShare, "{\"format\":\"x\"," + base.json.dropFirst())
        invalid("unknown-field", .malformedCustodianShare, try edit { $0.setting("label", .string("laptop")) })
        invalid("missing-created-at", .malformedCustodianShare, try edit { $0.removing("createdAt") })
        invalid("missing-sealed-share", .malformedCustodianShare, try edit { $0.removing("sealedShare") })
        invalid(
            "format-other-document", .malformedCustodianShare,
            try edit { $0.setting("format", .string("share-recovery/share@1")) })
        invalid(
            "format-version-2", .unsupportedVersion,
            try edit { $0.setting("format", .string("share-recovery/custodian-backup-share@2")) })
        invalid("unknown-backup-method", .unsupportedMethod, try edit { $0.setting("backupMethod", .string("fax")) })
        invalid(
            "backup-method-api-name", .unsupportedMethod, try edit { $0.setting("backupMethod", .string("PASSWORD")) })
        invalid("unknown-curve", .invalidParameters, try edit { $0.setting("curve", .string("p256")) })
        invalid(
            "generation-not-integer", .malformedCustodianShare, try edit { $0.setting("generation", .number("0.0")) })
        invalid("negative-party-index", .invalidParameters, try edit { $0.setting("partyIndex", .number("-2")) })
        invalid("party-index-0", .invalidParameters, try edit { $0.setting("partyIndex", .integer(0)) })
        invalid("threshold-greater-than-parties", .invalidParameters, try edit { $0.setting("threshold", .integer(3)) })
        invalid(
            "commitment-count-not-threshold", .invalidParameters,
            try edit { $0.setting("commitments", .array([.string(baseRecord.commitments[0].hex)])) })
        invalid(
            "upper-case-setid", .malformedCustodianShare,
            try edit { $0.setting("setId", .string(baseRecord.setId.hex.uppercased())) })
        invalid(
            "commitment-wrong-length", .malformedCustodianShare,
            try edit {
                $0.setting(
                    "commitments",
                    .array([
                        .string(baseRecord.commitments[0].hex),
                        .string(String(baseRecord.commitments[1].hex.dropLast(2))),
                    ]))
            })
        invalid(
            "sealed-share-not-base64", .malformedCustodianShare,
            try edit { $0.setting("sealedShare", .string("*" + Base64.encode(base.sealedShare).dropFirst())) })
        invalid(
            "created-at-with-offset", .malformedCustodianShare,
            try edit { $0.setting("createdAt", .string("2026-01-01T01:00:00+01:00")) })
        invalid(
            "created-at-month-13", .malformedCustodianShare,
            try edit { $0.setting("createdAt", .string("2026-13-01T00:00:00Z")) })
        invalid(
            "created-at-without-seconds", .malformedCustodianShare,
            try edit { $0.setting("createdAt", .string("2026-01-01T00:00Z")) })
        invalid(
            "created-at-february-30", .malformedCustodianShare,
            try edit { $0.setting("createdAt", .string("2026-02-30T00:00:00Z")) })
        invalid(
            "created-at-empty-fraction", .malformedCustodianShare,
            try edit { $0.setting("createdAt", .string("2026-01-01T00:00:00.Z")) })

        // Unsealing.
        let otherKey = try SealedBox.seal(try baseRecord.binary(), to: other.publicKey, using: random)
        invalid(
            "sealed-to-another-key", .unsealFailed, text(describing: baseRecord, method: .password, sealed: otherKey))
        invalid(
            "sealed-share-byte-changed", .unsealFailed,
            text(
                describing: baseRecord, method: .password,
                sealed: VectorFixtures.mutated(base.sealedShare) { $0[60] ^= 0x01 }))
        invalid("sealed-share-empty", .unsealFailed, text(describing: baseRecord, method: .password, sealed: []))
        invalid(
            "sealed-share-shorter-than-overhead", .unsealFailed,
            text(
                describing: baseRecord, method: .password,
                sealed: Array(base.sealedShare.prefix(SealedBox.overhead - 1))))

        // The sealed record against the JSON.
        invalid(
            "json-generation-disagrees", .tamperedShare,
            try edit { $0.setting("generation", .integer(baseRecord.generation + 1)) })
        invalid("json-walletid-disagrees", .tamperedShare, try edit { $0.setting("walletId", .string("wallet-other")) })
        invalid("json-setid-disagrees", .tamperedShare, try edit { $0.setting("setId", .hex(random.bytes(count: 16))) })
        invalid(
            "json-party-index-disagrees", .tamperedShare,
            try edited(wide) { $0.setting("partyIndex", .integer(3)) })
        let otherSet = try VectorFixtures.dealSet(
            curve: .secp256k1, walletId: baseRecord.walletId, kind: .backup, threshold: 2, parties: 2, generation: 0,
            random: random)
        invalid(
            "json-commitment-disagrees", .tamperedShare,
            try edit {
                $0.setting(
                    "commitments",
                    .array([.string(baseRecord.commitments[0].hex), .string(otherSet[0].commitments[1].hex)]))
            })
        invalid(
            "sealed-record-of-another-set", .tamperedShare,
            text(
                describing: baseRecord, method: .password,
                sealed: try SealedBox.seal(try otherSet[1].binary(), to: custodian.publicKey, using: random)))
        let signing = try ShareRecord(
            walletId: baseRecord.walletId, curve: baseRecord.curve, kind: .signing, threshold: baseRecord.threshold,
            parties: baseRecord.parties, partyIndex: baseRecord.partyIndex, generation: baseRecord.generation,
            setId: baseRecord.setId, secret: baseRecord.secret, commitments: baseRecord.commitments)
        invalid(
            "sealed-record-is-signing-share", .tamperedShare,
            text(
                describing: baseRecord, method: .password,
                sealed: try SealedBox.seal(try signing.binary(), to: custodian.publicKey, using: random)))

        // The sealed record itself.
        let recordBytes = try VectorFixtures.binary(baseRecord)
        let s = VectorFixtures.secretOffset(baseRecord)
        let wrongShare = VectorFixtures.mutated(recordBytes) {
            $0.replaceSubrange(s..<s + 32, with: VectorFixtures.shiftedSecret(baseRecord))
        }
        invalid(
            "sealed-record-share-does-not-match-commitments", .invalidShare,
            text(
                describing: baseRecord, method: .password,
                sealed: try SealedBox.seal(SecureBytes(copying: wrongShare), to: custodian.publicKey, using: random)))
        invalid(
            "sealed-record-truncated", .malformedRecord,
            text(
                describing: baseRecord, method: .password,
                sealed: try SealedBox.seal(
                    SecureBytes(copying: Array(recordBytes.dropLast())), to: custodian.publicKey, using: random)))
        return cases
    }
}
