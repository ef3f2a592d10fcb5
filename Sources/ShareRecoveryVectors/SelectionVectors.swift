import ShareCrypto
import ShareRecovery

/// `selection.json`: choosing the custodian shares that complete a user backup share (§7).
enum SelectionVectors: VectorKind {
    static let kind = "selection"
    static let summary =
        "docs/formats.md §7 custodian share selection. userShare is the decrypted user backup share (§4 JSON with its "
        + "secret), method the backup method from its cipherText header, candidates the §6 JSON texts the custodian "
        + "returned, custodianSecretKey the X25519 key they are sealed to. A valid case selects exactly the party "
        + "indices in selected, lowest first; an invalid case ends in the named error."
    static let fields: Set<String> = ["userShare", "method", "custodianSecretKey", "candidates", "selected"]

    // MARK: Verification

    static func outcome(_ vector: VectorCase) throws -> SelectionOutcome {
        let user = try ShareRecord(json: JSONWriter.write(try vector.value("userShare")))
        guard user.secret != nil else { throw VectorProblem("userShare must carry its secret") }
        let name = try vector.string("method")
        guard let method = BackupMethod(name: name) else { throw VectorProblem("unknown method \"\(name)\"") }
        let keyPair = try CustodianShareVectors.keyPair(vector)
        return CustodianShareSelector(custodianKey: keyPair)
            .select(for: user, method: method, candidates: try vector.stringArray("candidates"))
    }

    static func checkValid(_ vector: VectorCase) throws {
        let expected = try vector.array("selected").map { (value) throws(VectorProblem) in
            try VectorCase.integer(value, field: "selected")
        }
        let outcome = try outcome(vector)
        let chosen = try outcome.get().map(\.partyIndex)
        guard chosen == expected else { throw VectorProblem("selected \(chosen), expected \(expected)") }
    }

    static func exerciseInvalid(_ vector: VectorCase) throws {
        _ = try outcome(vector).get()
    }

    // MARK: Generation

    static func cases(random: DeterministicRandom) throws -> [JSONValue] {
        var cases: [JSONValue] = []
        let custodian = SealingKeyPair(using: random)
        let other = SealingKeyPair(using: random)
        let secretKey: JSONValue = .hex(custodian.secretKey.revealedBytes())

        func seal(_ record: ShareRecord, _ method: BackupMethod, to key: SealingKeyPair? = nil) throws -> String {
            try CustodianBackupShare(
                sealing: record, method: method, custodianPublicKey: (key ?? custodian).publicKey,
                createdAt: VectorFixtures.createdAt, using: random
            ).json
        }
        /// JSON that describes `record` but seals `sealed` instead (to the custodian key).
        func sealing(_ sealed: [UInt8], as record: ShareRecord, _ method: BackupMethod) throws -> String {
            CustodianShareVectors.text(
                describing: record, method: method,
                sealed: try SealedBox.seal(SecureBytes(copying: sealed), to: custodian.publicKey, using: random))
        }
        func tampered(_ text: String) throws -> String {
            let share = try CustodianBackupShare(json: text)
            return try CustodianShareVectors.edited(share) {
                $0.setting(
                    "sealedShare",
                    .string(Base64.encode(VectorFixtures.mutated(share.sealedShare) { $0[$0.count - 1] ^= 0x01 })))
            }
        }
        func edited(_ text: String, _ key: String, _ value: JSONValue) throws -> String {
            JSONWriter.write(try VectorFixtures.parse(text).setting(key, value))
        }
        func fields(_ user: ShareRecord, _ method: BackupMethod, _ candidates: [String]) -> [(
            key: String, value: JSONValue
        )] {
            [
                ("userShare", VectorFixtures.json(user)), ("method", .string(method.name)),
                ("custodianSecretKey", secretKey),
                ("candidates", .array(candidates.map(JSONValue.string))),
            ]
        }
        func valid(_ id: String, _ user: ShareRecord, _ method: BackupMethod, _ candidates: [String], selected: [Int]) {
            cases.append(
                CaseBuilder.valid(
                    id, fields(user, method, candidates) + [("selected", .array(selected.map(JSONValue.integer)))]))
        }
        func invalid(
            _ id: String, _ error: ShareRecoveryError.Code, _ user: ShareRecord, _ method: BackupMethod,
            _ candidates: [String]
        ) {
            cases.append(CaseBuilder.invalid(id, error, fields(user, method, candidates)))
        }

        for (curve, method) in [(Curve.secp256k1, BackupMethod.password), (.ed25519, .passkey)] {
            let walletId = "wallet-\(curve)-sel"
            func backupSet(_ walletId: String, curve: Curve, parties: Int, generation: UInt32) throws -> [ShareRecord] {
                try VectorFixtures.dealSet(
                    curve: curve, walletId: walletId, kind: .backup, threshold: 2, parties: parties,
                    generation: generation,
                    random: random)
            }
            let pair = try backupSet(walletId, curve: curve, parties: 2, generation: 3)
            let trio = try backupSet(walletId, curve: curve, parties: 3, generation: 3)
            let user = pair[0], user3 = trio[0]
            let c2 = try seal(pair[1], method)
            let t2 = try seal(trio[1], method), t3 = try seal(trio[2], method)

            // Decoys, each ruled out by one metadata field.
            let otherCurve: Curve = curve == .secp256k1 ? .ed25519 : .secp256k1
            let decoys = [
                try seal(try backupSet("wallet-\(curve)-other", curve: curve, parties: 2, generation: 3)[1], method),
                try seal(try backupSet(walletId, curve: curve, parties: 2, generation: 3)[1], method),
                "{",
                try edited(c2, "backupMethod", .string(method == .password ? "recoveryCode" : "iCloud")),
                try edited(c2, "generation", .integer(4)),
                try seal(try backupSet(walletId, curve: otherCurve, parties: 2, generation: 3)[1], method),
                try edited(c2, "commitments", .array(trio[0].commitments.map { .string($0.hex) })),
            ]

            valid("\(curve)-2of2-one-candidate", user, method, [c2], selected: [2])
            valid(
                "\(curve)-2of2-among-decoys", user, method, Array(decoys.prefix(4)) + [c2] + decoys.dropFirst(4),
                selected: [2])
            valid("\(curve)-2of3-lowest-index-wins", user3, method, [t3, t2], selected: [2])
            valid("\(curve)-2of2-duplicate-candidates", user, method, [c2, c2], selected: [2])
            invalid("\(curve)-nothing-found", .noMatchingShare, user, method, decoys)
            invalid("\(curve)-only-tampered-match", .inconsistentShares, user, method, [try tampered(c2)])
            switch curve {
            case .secp256k1:
                valid(
                    "secp256k1-2of3-tampered-party2-falls-back-to-party3", user3, method, [try tampered(t2), t3],
                    selected: [3])
                valid(
                    "secp256k1-2of2-tampered-copy-then-good-copy", user, method, [try tampered(c2), c2], selected: [2])
                valid(
                    "secp256k1-2of3-candidate-with-user-index-ignored", user3, method, [try seal(user3, method), t3],
                    selected: [3])
                invalid("secp256k1-no-candidates", .noMatchingShare, user, method, [])
                invalid("secp256k1-other-method-from-header", .noMatchingShare, user, .cloudKey, [c2])
                invalid(
                    "secp256k1-json-disagrees-with-sealed-record", .inconsistentShares, user, method,
                    [try sealing(try VectorFixtures.binary(decoysSet(pair, random: random)), as: pair[1], method)])
                invalid(
                    "secp256k1-2of3-both-custodian-shares-invalid", .inconsistentShares, user3, method,
                    [try tampered(t2), try seal(trio[2], method, to: other)])
                let signingUser = try ShareRecord(
                    walletId: user.walletId, curve: user.curve, kind: .signing, threshold: user.threshold,
                    parties: user.parties,
                    partyIndex: user.partyIndex, generation: user.generation, setId: user.setId, secret: user.secret,
                    commitments: user.commitments)
                invalid("secp256k1-user-share-is-signing", .noMatchingShare, signingUser, method, [c2])
            case .ed25519:
                valid(
                    "ed25519-2of3-party2-sealed-to-another-key-falls-back", user3, method,
                    [try seal(trio[1], method, to: other), t3], selected: [3])
                valid(
                    "ed25519-2of3-party2-json-disagrees-falls-back", user3, method,
                    [try sealing(try VectorFixtures.binary(trio[2]), as: trio[1], method), t3], selected: [3])
                invalid(
                    "ed25519-only-malformed-candidates", .noMatchingShare, user, method, ["{", "[]", "not json", ""])
                invalid(
                    "ed25519-only-match-sealed-to-another-key", .inconsistentShares, user, method,
                    [try seal(pair[1], method, to: other)])
                invalid("ed25519-only-user-index", .noMatchingShare, user, method, [try seal(user, method)])
                let s = VectorFixtures.secretOffset(pair[1])
                let wrongShare = VectorFixtures.mutated(try VectorFixtures.binary(pair[1])) {
                    $0.replaceSubrange(s..<s + 32, with: VectorFixtures.shiftedSecret(pair[1]))
                }
                invalid(
                    "ed25519-sealed-record-share-does-not-match-commitments", .inconsistentShares, user, method,
                    [try sealing(wrongShare, as: pair[1], method)])
            }
        }
        return cases
    }

    /// Party 2 of a fresh set of the same wallet and layout: a record that passes every check on its own.
    private static func decoysSet(_ pair: [ShareRecord], random: DeterministicRandom) throws -> ShareRecord {
        try VectorFixtures.dealSet(
            curve: pair[1].curve, walletId: pair[1].walletId, kind: .backup, threshold: 2, parties: 2,
            generation: pair[1].generation, random: random)[1]
    }
}
