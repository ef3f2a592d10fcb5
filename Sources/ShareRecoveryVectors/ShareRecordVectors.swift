import ShareCrypto
import ShareRecovery

/// `share-record.json`: the binary record and the JSON form of §4.
enum ShareRecordVectors: VectorKind {
    static let kind = "share-record"
    static let summary =
        "docs/formats.md §4 share records. A valid case gives the binary record (recordHex) and the JSON form with "
        + "its secret (json); both parse, describe the same share, and re-encode to exactly themselves. An invalid "
        + "case gives one form, which a reader must refuse with the named error."
    static let fields: Set<String> = ["recordHex", "json"]

    // MARK: Verification

    static func checkValid(_ vector: VectorCase) throws {
        let recordBytes = try vector.hex("recordHex")
        let json = try vector.value("json")
        let fromBinary = try ShareRecord(binary: SecureBytes(copying: recordBytes))
        let fromJSON = try ShareRecord(json: JSONWriter.write(json))
        guard fromJSON.secret != nil else { throw VectorProblem("a valid case's json must carry the secret") }
        guard fromBinary == fromJSON else { throw VectorProblem("recordHex and json describe different shares") }
        guard try VectorFixtures.binary(fromBinary) == recordBytes else {
            throw VectorProblem("recordHex does not re-encode to itself")
        }
        guard fromJSON.jsonValue(includingSecret: true).sortedKeys == json.sortedKeys else {
            throw VectorProblem("json does not re-encode to itself")
        }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        guard vector.has("recordHex") || vector.has("json") else { throw VectorProblem("no recordHex and no json") }
        var errors: [(form: String, error: ShareRecoveryError)] = []
        if vector.has("recordHex") {
            let bytes = try vector.hex("recordHex")
            do {
                _ = try ShareRecord(binary: SecureBytes(copying: bytes))
                throw VectorProblem("recordHex accepted")
            } catch let error as ShareRecoveryError {
                errors.append(("recordHex", error))
            }
        }
        if vector.has("json") {
            let json = try vector.value("json")
            do {
                _ = try ShareRecord(json: JSONWriter.write(json))
                throw VectorProblem("json accepted")
            } catch let error as ShareRecoveryError {
                errors.append(("json", error))
            }
        }
        if errors.count == 2, errors[0].error.code != errors[1].error.code {
            throw VectorProblem("recordHex gives \(errors[0].error.code) but json gives \(errors[1].error.code)")
        }
        throw errors[0].error
    }

    // MARK: Generation

    /// ed25519 encodings that §1 rejects.
    static let ed25519Identity = "0100000000000000000000000000000000000000000000000000000000000000"
    /// A point of order 8.
    static let ed25519SmallOrder = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
    /// G + (the order-8 point above): on the curve, canonical, not in the prime-order subgroup.
    static let ed25519MixedOrder = "98519eadf35b995233b51b5cd23e9cc5a28b639b5a4af0ec903cb960d81b7819"
    /// y = 2: (y²−1)/(d·y²+1) is not a square, so no x exists.
    static let ed25519OffCurve = "0200000000000000000000000000000000000000000000000000000000000000"
    /// y = p: a non-canonical encoding.
    static let ed25519NonCanonical = "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
    /// x = 5: 5³ + 7 is not a square mod p.
    static let secp256k1OffCurve = "020000000000000000000000000000000000000000000000000000000000000005"
    /// x = 2²⁵⁶ − 1 ≥ p: not a field element.
    static let secp256k1XAboveP = "02ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        var bases: [Curve: ShareRecord] = [:]
        var thirdParties: [Curve: ShareRecord] = [:]

        func valid(_ id: String, _ record: ShareRecord) throws {
            cases.append(
                CaseBuilder.valid(
                    id, [("recordHex", .hex(try VectorFixtures.binary(record))), ("json", VectorFixtures.json(record))])
            )
        }

        for curve in Curve.allCases {
            let signing = try VectorFixtures.dealSet(
                curve: curve, walletId: "wallet-\(curve)-1", kind: .signing, threshold: 2, parties: 2, generation: 0,
                random: random)
            let backup = try VectorFixtures.dealSet(
                curve: curve, walletId: "wallet-\(curve)-1", kind: .backup, threshold: 2, parties: 3, generation: 4,
                random: random)
            let wide = try VectorFixtures.dealSet(
                curve: curve, walletId: "wallet-\(curve)-2", kind: .signing, threshold: 3, parties: 3, generation: 1,
                random: random)
            let unicode = try VectorFixtures.dealSet(
                curve: curve, walletId: "wallet-\u{FC}n\u{EF}c\u{F6}d\u{E9}-\u{20AC}-\u{1F511}", kind: .backup,
                threshold: 2,
                parties: 2, generation: 7, random: random)
            for share in signing { try valid("\(curve)-signing-2of2-party\(share.partyIndex)", share) }
            for share in backup { try valid("\(curve)-backup-2of3-party\(share.partyIndex)", share) }
            try valid("\(curve)-signing-3of3-party2", wide[1])
            try valid("\(curve)-backup-2of2-non-ascii-walletid", unicode[0])
            bases[curve] = signing[0]
            thirdParties[curve] = wide[1]
        }
        let long = try VectorFixtures.dealSet(
            curve: .secp256k1, walletId: String(repeating: "w", count: 255), kind: .signing, threshold: 2, parties: 2,
            generation: UInt32.max, random: random)
        try valid("secp256k1-signing-2of2-walletid-255-bytes-generation-max", long[1])

        cases += try binaryCases(bases: bases)
        cases += try jsonCases(bases: bases, wide: thirdParties)
        return cases
    }

    private static func binaryCases(bases: [Curve: ShareRecord]) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ bytes: [UInt8]) {
            cases.append(CaseBuilder.invalid(id, error, [("recordHex", .hex(bytes))]))
        }
        let secp = bases[.secp256k1]!, ed = bases[.ed25519]!
        let b = try VectorFixtures.binary(secp)
        let walletIdCount = secp.walletId.utf8.count
        let m = VectorFixtures.mutated

        // Shape and header fields, in the reader's check order.
        invalid("binary-empty", .malformedRecord, [])
        invalid("binary-bad-magic", .malformedRecord, m(b) { $0[3] = UInt8(ascii: "X") })
        invalid("binary-truncated-header", .malformedRecord, Array(b.prefix(30)))
        invalid("binary-version-0", .unsupportedVersion, m(b) { $0[4] = 0 })
        invalid("binary-version-2", .unsupportedVersion, m(b) { $0[4] = 2 })
        invalid("binary-version-2-and-truncated", .unsupportedVersion, Array(m(b) { $0[4] = 2 }.prefix(40)))
        invalid("binary-curve-id-0", .invalidParameters, m(b) { $0[5] = 0 })
        invalid("binary-curve-id-3", .invalidParameters, m(b) { $0[5] = 3 })
        invalid("binary-kind-0", .invalidParameters, m(b) { $0[6] = 0 })
        invalid("binary-kind-3", .invalidParameters, m(b) { $0[6] = 3 })
        invalid("binary-threshold-1", .invalidParameters, m(b) { $0[7] = 1 })
        invalid("binary-threshold-greater-than-parties", .invalidParameters, m(b) { $0[7] = 3 })
        invalid("binary-parties-1", .invalidParameters, m(b) { $0[8] = 1 })
        invalid("binary-party-index-0", .invalidParameters, m(b) { $0[9] = 0 })
        invalid("binary-party-index-greater-than-parties", .invalidParameters, m(b) { $0[9] = 3 })
        invalid(
            "binary-walletid-length-0", .invalidParameters,
            m(b) {
                $0[30] = 0
                $0.removeSubrange(31..<31 + walletIdCount)
            })
        invalid(
            "binary-threshold-1-and-trailing-byte", .invalidParameters,
            m(b) {
                $0[7] = 1; $0.append(0)
            })
        invalid("binary-truncated-last-byte", .malformedRecord, Array(b.dropLast()))
        invalid("binary-trailing-byte", .malformedRecord, b + [0])
        invalid("binary-walletid-length-overruns-record", .malformedRecord, m(b) { $0[30] = 200 })
        invalid("binary-walletid-not-utf8", .malformedRecord, m(b) { $0[31] = 0xFF })
        invalid(
            "binary-walletid-not-utf8-and-zero-scalar", .malformedRecord,
            m(b) {
                $0[31] = 0xC3
                $0.replaceSubrange(31 + walletIdCount..<63 + walletIdCount, with: [UInt8](repeating: 0, count: 32))
            })

        // Values: scalar, then points, then x_i·G.
        for (curve, record) in [(Curve.secp256k1, secp), (.ed25519, ed)] {
            let bytes = try VectorFixtures.binary(record)
            let s = VectorFixtures.secretOffset(record)
            let a1 = VectorFixtures.commitmentOffset(record, 1)
            func secret(_ scalar: [UInt8]) -> [UInt8] { m(bytes) { $0.replaceSubrange(s..<s + 32, with: scalar) } }
            func commitment1(_ hex: String) -> [UInt8] {
                m(bytes) { $0.replaceSubrange(a1..<a1 + curve.pointCount, with: Hex.decode(hex)!) }
            }
            invalid("\(curve)-binary-scalar-equals-order", .invalidScalar, secret(VectorFixtures.order(curve)))
            invalid("\(curve)-binary-zero-scalar", .invalidScalar, secret([UInt8](repeating: 0, count: 32)))
            invalid(
                "\(curve)-binary-share-does-not-match-commitments", .invalidShare,
                secret(VectorFixtures.shiftedSecret(record)))
            switch curve {
            case .secp256k1:
                invalid(
                    "secp256k1-binary-scalar-above-order", .invalidScalar, secret([UInt8](repeating: 0xFF, count: 32)))
                invalid("secp256k1-binary-commitment-off-curve", .invalidPoint, commitment1(secp256k1OffCurve))
                invalid("secp256k1-binary-commitment-x-not-below-p", .invalidPoint, commitment1(secp256k1XAboveP))
                invalid(
                    "secp256k1-binary-commitment-uncompressed-prefix", .invalidPoint,
                    m(bytes) { $0[a1] = 0x04 })
                invalid("secp256k1-binary-commitment-hybrid-prefix", .invalidPoint, m(bytes) { $0[a1] = 0x06 })
                invalid(
                    "secp256k1-binary-zero-scalar-and-off-curve-commitment", .invalidScalar,
                    m(commitment1(secp256k1OffCurve)) {
                        $0.replaceSubrange(s..<s + 32, with: [UInt8](repeating: 0, count: 32))
                    })
                invalid(
                    "secp256k1-binary-off-curve-commitment-and-wrong-share", .invalidPoint,
                    m(commitment1(secp256k1OffCurve)) {
                        $0.replaceSubrange(s..<s + 32, with: VectorFixtures.shiftedSecret(record))
                    })
            case .ed25519:
                invalid("ed25519-binary-commitment-off-curve", .invalidPoint, commitment1(ed25519OffCurve))
                invalid("ed25519-binary-commitment-small-order", .invalidPoint, commitment1(ed25519SmallOrder))
                invalid("ed25519-binary-commitment-mixed-order", .invalidPoint, commitment1(ed25519MixedOrder))
                invalid("ed25519-binary-commitment-identity", .invalidPoint, commitment1(ed25519Identity))
                invalid("ed25519-binary-commitment-non-canonical", .invalidPoint, commitment1(ed25519NonCanonical))
                invalid(
                    "ed25519-binary-public-key-identity", .invalidPoint,
                    m(bytes) {
                        let a0 = VectorFixtures.commitmentOffset(record, 0)
                        $0.replaceSubrange(a0..<a0 + 32, with: Hex.decode(ed25519Identity)!)
                    })
            }
        }
        return cases
    }

    private static func jsonCases(bases: [Curve: ShareRecord], wide: [Curve: ShareRecord]) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ json: JSONValue) {
            cases.append(CaseBuilder.invalid(id, error, [("json", json)]))
        }
        let secp = bases[.secp256k1]!, ed = bases[.ed25519]!
        let j = VectorFixtures.json(secp)
        let commitments = secp.commitments.map(\.hex)

        // Shape: malformedRecord.
        invalid("json-not-an-object", .malformedRecord, .array([j]))
        invalid("json-unknown-field", .malformedRecord, j.setting("label", .string("phone")))
        invalid("json-missing-generation", .malformedRecord, j.removing("generation"))
        invalid("json-missing-public-key", .malformedRecord, j.removing("publicKey"))
        invalid("json-null-secret", .malformedRecord, j.setting("secret", .null))
        invalid("json-format-other-document", .malformedRecord, j.setting("format", .string("share-recovery/share")))
        invalid("json-walletid-not-a-string", .malformedRecord, j.setting("walletId", .integer(1)))
        invalid("json-threshold-2.0", .malformedRecord, j.setting("threshold", .number("2.0")))
        invalid("json-threshold-2e0", .malformedRecord, j.setting("threshold", .number("2e0")))
        invalid("json-threshold-as-string", .malformedRecord, j.setting("threshold", .string("2")))
        invalid("json-upper-case-hex-setid", .malformedRecord, j.setting("setId", .string(secp.setId.hex.uppercased())))
        invalid(
            "json-upper-case-hex-secret", .malformedRecord,
            j.setting("secret", .string(Hex.encode(VectorFixtures.secretBytes(secp)).uppercased())))
        invalid(
            "json-upper-case-hex-commitment", .malformedRecord,
            j.setting("commitments", .array([.string(commitments[0]), .string(commitments[1].uppercased())])))
        invalid(
            "json-setid-wrong-length", .malformedRecord, j.setting("setId", .string(String(secp.setId.hex.dropLast(2))))
        )
        invalid(
            "json-secret-wrong-length", .malformedRecord,
            j.setting("secret", .string(String(Hex.encode(VectorFixtures.secretBytes(secp)).dropLast(2)))))
        invalid(
            "json-public-key-wrong-length", .malformedRecord, j.setting("publicKey", .string(commitments[0] + "00")))
        invalid("json-commitments-not-an-array", .malformedRecord, j.setting("commitments", .string(commitments[0])))

        // Versions and names.
        invalid("json-format-share-v2", .unsupportedVersion, j.setting("format", .string("share-recovery/share@2")))
        invalid("json-unknown-curve", .invalidParameters, j.setting("curve", .string("p256")))
        invalid("json-curve-name-wrong-case", .invalidParameters, j.setting("curve", .string("Secp256k1")))
        invalid("json-unknown-kind", .invalidParameters, j.setting("kind", .string("cold")))

        // Ranges: invalidParameters.
        invalid("json-negative-generation", .invalidParameters, j.setting("generation", .number("-1")))
        invalid("json-generation-above-u32", .invalidParameters, j.setting("generation", .number("4294967296")))
        invalid("json-threshold-1", .invalidParameters, j.setting("threshold", .integer(1)))
        invalid("json-party-index-0", .invalidParameters, j.setting("partyIndex", .integer(0)))
        invalid("json-parties-256", .invalidParameters, j.setting("parties", .integer(256)))
        invalid("json-empty-walletid", .invalidParameters, j.setting("walletId", .string("")))
        invalid(
            "json-commitment-count-not-threshold", .invalidParameters,
            j.setting("commitments", .array((commitments + [commitments[1]]).map(JSONValue.string))))

        // Values.
        invalid("json-secret-equals-order", .invalidScalar, j.setting("secret", .hex(VectorFixtures.order(.secp256k1))))
        invalid("json-zero-secret", .invalidScalar, j.setting("secret", .hex([UInt8](repeating: 0, count: 32))))
        invalid(
            "json-commitment-off-curve", .invalidPoint,
            j.setting("commitments", .array([.string(commitments[0]), .string(secp256k1OffCurve)])))
        let edCommitments = ed.commitments.map(\.hex)
        invalid(
            "ed25519-json-commitment-small-order", .invalidPoint,
            VectorFixtures.json(ed).setting(
                "commitments", .array([.string(edCommitments[0]), .string(ed25519SmallOrder)])))
        invalid("json-public-key-not-commitment-0", .publicKeyMismatch, j.setting("publicKey", .string(commitments[1])))
        invalid(
            "json-share-does-not-match-commitments", .invalidShare,
            j.setting("secret", .hex(VectorFixtures.shiftedSecret(secp))))
        let edWide = wide[.ed25519]!
        invalid(
            "ed25519-json-3of3-party-index-changed", .invalidShare,
            VectorFixtures.json(edWide).setting("partyIndex", .integer(3)))
        invalid(
            "ed25519-json-share-does-not-match-commitments", .invalidShare,
            VectorFixtures.json(ed).setting("secret", .hex(VectorFixtures.shiftedSecret(ed))))
        return cases
    }
}
