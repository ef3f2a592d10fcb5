import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery
@testable import ShareRecoveryVectors

/// The classes of docs/bad-inputs.md that no other test covered directly: each input is built from a
/// valid one by the smallest change that makes it bad, and must fail with its own typed code.
@Suite("Bad-input catalogue")
struct BadInputCatalogueTests {
    /// A valid user backup share and its cipherText, for the method's kind of secret.
    struct Backup {
        let record: ShareRecord
        let cipherText: CipherText
        let secret: BackupSecret

        init(method: BackupMethod, curve: Curve = .secp256k1, seed: String) throws {
            let random = DeterministicRandom(seed: Array(seed.utf8))
            record = try VectorFixtures.dealSet(
                curve: curve, walletId: "w-bad", kind: .backup, threshold: 2, parties: 2, generation: 0, random: random)[
                    0]
            secret = method.kdf == .argon2id13 ? .text("pw \(seed)") : .keyMaterial(random.secureBytes(count: 32))
            cipherText = try CipherText.encrypt(
                record, method: method, secret: secret, argon2: .minimum, keyId: "kms/key", using: random)
        }

        /// Parses `bytes` and decrypts them with the right secret: the first error on the way, or `nil`.
        func outcome(of bytes: [UInt8]) -> ShareRecoveryError? {
            do {
                _ = try CipherText(bytes: bytes).decrypt(secret: secret)
                return nil
            } catch {
                return error
            }
        }
    }

    static let methods: [BackupMethod] = [.password, .cloudKey]

    // MARK: cipherText

    @Test("every truncation of a cipherText is malformed (header) or fails authentication (body)", arguments: methods)
    func truncatedCipherTexts(method: BackupMethod) throws {
        let backup = try Backup(method: method, seed: "truncated \(method)")
        let bytes = backup.cipherText.bytes
        // Below header + tag the envelope cannot parse; from there on it parses and the AEAD refuses it.
        let shortestParsable = backup.cipherText.header.count + XChaCha20Poly1305.tagCount
        for length in 0..<bytes.count {
            let error = backup.outcome(of: Array(bytes.prefix(length)))
            let expected: ShareRecoveryError.Code =
                length < shortestParsable ? .malformedCipherText : .authenticationFailed
            #expect(
                error?.code == expected,
                "\(method) cut to \(length) of \(bytes.count) bytes: \(String(describing: error))")
        }
        #expect(backup.outcome(of: bytes) == nil, "the untouched cipherText decrypts")
    }

    @Test(
        "every flipped bit of a cipherText is refused; past the header bytes it is authenticationFailed",
        arguments: methods)
    func bitFlippedCipherTexts(method: BackupMethod) throws {
        let backup = try Backup(method: method, seed: "flipped \(method)")
        let bytes = backup.cipherText.bytes
        // Salt, keyId bytes, nonce, ciphertext and tag carry no structure: only the AEAD can notice them.
        let keyIdLengthOffset = 7 + (method.kdf == .argon2id13 ? 24 : 32)
        let headerCodes: [ShareRecoveryError.Code] = [
            .malformedCipherText, .unsupportedVersion, .unsupportedMethod, .kdfMismatch, .invalidKdfParameters,
            .authenticationFailed,
        ]
        let keyIdEnd = keyIdLengthOffset + 1 + backup.cipherText.keyId.utf8.count
        for position in bytes.indices {
            for bit in 0..<8 {
                // These flips give valid memlimits of 64–512 MiB: refused by the AEAD like the other
                // parameter bytes, but too slow and large for a unit test.
                if method.kdf == .argon2id13, position == 12, bit < 4 { continue }
                var flipped = bytes
                flipped[position] ^= 1 << bit
                let error = backup.outcome(of: flipped)
                // Magic, version, method, kdf, Argon2id limits, keyId length and keyId (UTF-8) have structure.
                let structural =
                    position < 7 || (keyIdLengthOffset..<keyIdEnd).contains(position)
                    || (method.kdf == .argon2id13 && position < 15)
                if structural {
                    #expect(
                        error.map { headerCodes.contains($0.code) } == true,
                        "byte \(position) bit \(bit): \(String(describing: error))")
                } else {
                    #expect(
                        error?.code == .authenticationFailed,
                        "byte \(position) bit \(bit): \(String(describing: error))")
                }
            }
        }
    }

    @Test("bytes after the tag are part of the ciphertext, so they fail authentication", arguments: methods)
    func trailingBytesInCipherTexts(method: BackupMethod) throws {
        let backup = try Backup(method: method, seed: "trailing \(method)")
        for extra in [[UInt8(0)], [0x0A], Array(repeating: 0xFF, count: 16)] {
            #expect(backup.outcome(of: backup.cipherText.bytes + extra)?.code == .authenticationFailed)
        }
    }

    @Test("a wrong cloud key and a password differing in one character are the same authenticationFailed")
    func wrongSecrets() throws {
        let cloud = try Backup(method: .cloudKey, seed: "wrong cloud")
        var key = try #require(Self.keyMaterial(cloud.secret))
        key[0] ^= 1
        #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try cloud.cipherText.decrypt(secret: .keyMaterial(SecureBytes(copying: key)))
        }
        let password = try Backup(method: .password, seed: "wrong password")
        #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try password.cipherText.decrypt(secret: .text("pw wrong password!"))
        }
        // The wrong kind of secret for the method is refused before any key derivation.
        #expect(throws: ShareRecoveryError(.invalidKeyMaterial, "")) {
            try password.cipherText.decrypt(secret: cloud.secret)
        }
        #expect(throws: ShareRecoveryError(.invalidKeyMaterial, "")) {
            try cloud.cipherText.decrypt(secret: .text("pw"))
        }
    }

    static func keyMaterial(_ secret: BackupSecret) -> [UInt8]? {
        guard case .keyMaterial(let bytes) = secret.storage else { return nil }
        return bytes.revealedBytes()
    }

    @Test("every method byte with every kdf byte but its own is kdfMismatch")
    func methodKdfMismatch() throws {
        let backup = try Backup(method: .cloudKey, seed: "kdf")
        var count = 0
        for method in BackupMethod.allCases {
            for kdf in UInt8(0)...UInt8(255) where kdf != method.kdf.rawValue {
                var bytes = backup.cipherText.bytes
                bytes[5] = method.rawValue
                bytes[6] = kdf
                #expect(throws: ShareRecoveryError(.kdfMismatch, ""), "method \(method) kdf \(kdf)") {
                    try CipherText(bytes: bytes)
                }
                count += 1
            }
        }
        #expect(count == BackupMethod.allCases.count * 255)
    }

    @Test("a cipherText of another method than the one asked for is unsupportedMethod, before any key is derived")
    func engineRefusesAnotherMethod() async throws {
        let backup = try Backup(method: .cloudKey, seed: "engine method")
        let engine = try Self.offlineEngine(seed: "engine method")
        let log = StatusLog()
        await #expect(throws: ShareRecoveryError(.unsupportedMethod, "")) {
            try await engine.recover(
                method: .passkey, cipherText: backup.cipherText.base64, secret: backup.secret, progress: log.append)
        }
        #expect(log.all == [.readingShare])
    }

    /// Argon2id parameters that would cost hours or terabytes: refused while parsing, so the engine
    /// never reaches `decryptingShare` (where Argon2id runs) and nothing is allocated for them.
    static let absurdArgon2: [(opslimit: UInt32, memlimitKiB: UInt32)] = [
        (0, 8), (17, 8), (UInt32.max, 8), (1, 0), (1, 7), (1, 1_048_577), (1, UInt32.max), (UInt32.max, UInt32.max),
    ]

    @Test("absurd Argon2id parameters are invalidKdfParameters before any Argon2id work")
    func absurdArgon2idParameters() async throws {
        let backup = try Backup(method: .password, seed: "argon2")
        let engine = try Self.offlineEngine(seed: "argon2")
        for (ops, mem) in Self.absurdArgon2 {
            #expect(throws: ShareCryptoError(.invalidKdfParameters, ""), "ops \(ops) mem \(mem)") {
                try Argon2idParameters(opslimit: ops, memlimitKiB: mem)
            }
            var bytes = backup.cipherText.bytes
            bytes.replaceSubrange(7..<11, with: Self.bigEndian(ops))
            bytes.replaceSubrange(11..<15, with: Self.bigEndian(mem))
            #expect(throws: ShareRecoveryError(.invalidKdfParameters, ""), "ops \(ops) mem \(mem)") {
                try CipherText(bytes: bytes)
            }
            let log = StatusLog()
            await #expect(throws: ShareRecoveryError(.invalidKdfParameters, "")) {
                try await engine.recover(
                    method: .password, cipherText: Base64.encode(bytes), secret: backup.secret, progress: log.append)
            }
            #expect(log.all == [.readingShare], "ops \(ops) mem \(mem): \(log.all)")
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    @Test("cipherTexts over 64 KiB are malformedCipherText, as bytes and as text")
    func oversizeCipherTexts() throws {
        let backup = try Backup(method: .cloudKey, seed: "oversize")
        let padded = backup.cipherText.bytes + [UInt8](repeating: 0, count: CipherText.maximumByteCount)
        #expect(throws: ShareRecoveryError(.malformedCipherText, "")) { try CipherText(bytes: padded) }
        #expect(throws: ShareRecoveryError(.malformedCipherText, "")) { try CipherText(base64: Base64.encode(padded)) }
        // Just at the limit, the envelope still parses (and then fails authentication): the limit is the only reason.
        let atLimit = Array(padded.prefix(CipherText.maximumByteCount))
        #expect(backup.outcome(of: atLimit)?.code == .authenticationFailed)
    }

    // MARK: Records

    /// Binary record of party 1 of a fresh 2-of-2 set, and the offset of its secret scalar.
    static func binaryRecord(curve: Curve, seed: String) throws -> (ShareRecord, [UInt8], Int) {
        let record = try KeyGeneration.generate(
            curve: curve, walletId: "w-record", using: DeterministicRandom(seed: Array(seed.utf8)))[0]
        let bytes = try record.binary().revealedBytes()
        return (record, bytes, 31 + record.walletId.utf8.count)
    }

    @Test("zero and ≥-order secret scalars in a record are invalidScalar", arguments: Curve.allCases)
    func recordScalars(curve: Curve) throws {
        let (_, bytes, offset) = try Self.binaryRecord(curve: curve, seed: "scalars \(curve)")
        let order = Self.orderBytes(curve)
        let orderPlusOne = try #require(Self.add(1, to: order, curve: curve))
        for (name, scalar) in [
            ("zero", [UInt8](repeating: 0, count: 32)), ("order", order), ("order + 1", orderPlusOne),
            ("all 0xff", [UInt8](repeating: 0xFF, count: 32)),
        ] {
            var changed = bytes
            changed.replaceSubrange(offset..<offset + 32, with: scalar)
            #expect(throws: ShareRecoveryError(.invalidScalar, ""), "\(curve) \(name)") {
                try ShareRecord(binary: SecureBytes(copying: changed))
            }
        }
    }

    /// The group order in the curve's scalar byte order, derived from the field: (−1) + 1.
    static func orderBytes(_ curve: Curve) -> [UInt8] {
        add(1, to: Scalar(1, curve: curve).negated.rawRepresentation.revealedBytes(), curve: curve)!
    }

    /// `bytes + value` in the curve's byte order, or `nil` on overflow of 32 bytes.
    static func add(_ value: UInt8, to bytes: [UInt8], curve: Curve) -> [UInt8]? {
        var out = bytes
        let indices = curve == .secp256k1 ? Array(out.indices.reversed()) : Array(out.indices)
        var carry = UInt16(value)
        for i in indices where carry > 0 {
            let sum = UInt16(out[i]) + carry
            out[i] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return carry == 0 ? out : nil
    }

    @Test(
        "party index 0 or above n, threshold above parties, and wrong commitment counts are invalidParameters",
        arguments: Curve.allCases)
    func recordShapes(curve: Curve) throws {
        let (record, bytes, _) = try Self.binaryRecord(curve: curve, seed: "shapes \(curve)")
        func expectInvalid(_ name: String, _ build: () throws -> ShareRecord) {
            #expect(throws: ShareRecoveryError(.invalidParameters, ""), "\(curve) \(name)") { _ = try build() }
        }
        func make(threshold: Int = 2, parties: Int = 2, index: Int = 1, commitments: [Point]? = nil) throws
            -> ShareRecord
        {
            try ShareRecord(
                walletId: record.walletId, curve: curve, kind: record.kind, threshold: threshold, parties: parties,
                partyIndex: index, generation: 0, setId: record.setId, secret: record.secret,
                commitments: commitments ?? record.commitments)
        }
        expectInvalid("party index 0") { try make(index: 0) }
        expectInvalid("party index n + 1") { try make(index: 3) }
        expectInvalid("threshold 3 of 2 parties") { try make(threshold: 3) }
        expectInvalid("one commitment for t = 2") { try make(commitments: Array(record.commitments.prefix(1))) }
        expectInvalid("three commitments for t = 2") {
            try make(commitments: record.commitments + [Point.generator(on: curve)])
        }
        // The binary form: byte 7 is t, byte 8 is n, byte 9 is i.
        for (name, offset, value) in [
            ("binary threshold above parties", 7, UInt8(3)), ("binary party index 0", 9, 0),
            ("binary party index 3", 9, 3),
        ] {
            var changed = bytes
            changed[offset] = value
            expectInvalid(name) { try ShareRecord(binary: SecureBytes(copying: changed)) }
        }
        // A commitment cut short or one extra byte makes the length wrong: malformedRecord.
        for changed in [Array(bytes.dropLast()), bytes + [0x02]] {
            #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
                try ShareRecord(binary: SecureBytes(copying: changed))
            }
        }
    }

    @Test(
        "JSON records over the 1 MiB parser limit are malformedRecord, custodian shares over 64 KiB malformedCustodianShare"
    )
    func oversizeJSON() throws {
        let record = try KeyGeneration.generate(
            curve: .secp256k1, walletId: "w-json", using: DeterministicRandom(seed: Array("json".utf8)))[0]
        let json = record.json()
        #expect(try ShareRecord(json: json) == record.publicDescription)
        // Trailing whitespace is allowed by JSON, so only the size makes this one bad.
        let padded = json + String(repeating: " ", count: StrictJSON.defaultMaximumSize)
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) { try ShareRecord(json: padded) }

        let custodian = SealingKeyPair(using: DeterministicRandom(seed: Array("json custodian".utf8)))
        let backup = try VectorFixtures.dealSet(
            curve: .secp256k1, walletId: "w-json", kind: .backup, threshold: 2, parties: 2, generation: 0,
            random: DeterministicRandom(seed: Array("json backup".utf8)))
        let share = try CustodianBackupShare(
            sealing: backup[1], method: .password, custodianPublicKey: custodian.publicKey
        ).json
        #expect(throws: Never.self) { try CustodianBackupShare(json: share) }
        let paddedShare = share + String(repeating: " ", count: CustodianBackupShare.maximumJSONSize)
        #expect(throws: ShareRecoveryError(.malformedCustodianShare, "")) {
            try CustodianBackupShare(json: paddedShare)
        }
    }

    @Test("another custodian's key-share JSON (tss-lib: decimal Xi, ShareID, BigXj) is not a share of ours")
    func foreignKeyShareJSON() throws {
        // The top-level shape of tss-lib's keygen fixtures (shared/vectors/tss-lib), values shortened.
        let tssLib = """
            {"Xi": 81527360391823761532117012851234672915839152610837125183210371293812737126781,
             "ShareID": 2, "Ks": [1, 2, 3], "BigXj": [{"Curve": "secp256k1", "Coords": [1, 2]}],
             "ECDSAPub": {"Curve": "secp256k1", "Coords": [1, 2]}}
            """
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) { try ShareRecord(json: tssLib) }
        #expect(throws: ShareRecoveryError(.malformedCustodianShare, "")) { try CustodianBackupShare(json: tssLib) }
    }

    // MARK: Resharing

    /// A 2-of-2 signing set and a recovery plan over it.
    struct Resharing2of2 {
        let shares: [ShareRecord]
        let plan: ResharingPlan
        let random: DeterministicRandom

        init(curve: Curve, seed: String) throws {
            random = DeterministicRandom(seed: Array(seed.utf8))
            shares = try KeyGeneration.generate(curve: curve, walletId: "w-reshare", using: random)
            plan = try ResharingPlan(
                oldSet: shares[0], dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .signing, newGeneration: 1,
                newSetId: .random(using: random))
        }

        func honestDealings() throws -> [Dealing] {
            try shares.map { try ResharingDealer.deal(share: $0, plan: plan, using: random) }
        }
    }

    @Test(
        "duplicate or zero dealer indices and a threshold above the parties are invalidParameters",
        arguments: Curve.allCases)
    func planShapes(curve: Curve) throws {
        let world = try Resharing2of2(curve: curve, seed: "plan \(curve)")
        let old = world.shares[0]
        for (name, dealers, threshold, parties) in [
            ("duplicate dealer", [1, 1], 2, 2), ("dealer 0", [0, 1], 2, 2), ("dealer above n", [1, 3], 2, 2),
            ("one dealer", [1], 2, 2), ("new threshold above new parties", [1, 2], 3, 2),
            ("new threshold 1", [1, 2], 1, 2),
        ] {
            #expect(throws: ShareRecoveryError(.invalidParameters, ""), "\(curve) \(name)") {
                try ResharingPlan(
                    oldSet: old, dealers: dealers, newThreshold: threshold, newParties: parties, newKind: .signing,
                    newGeneration: 1, newSetId: .random(using: world.random))
            }
        }
        // The same dealer twice among the dealings is refused by the receiver.
        let dealings = try world.honestDealings()
        #expect(throws: ShareRecoveryError(.dealerCheckFailed, "")) {
            try ResharingReceiver.receive(partyIndex: 1, plan: world.plan, dealings: [dealings[0], dealings[0]])
        }
        #expect(
            try ResharingReceiver.receive(partyIndex: 1, plan: world.plan, dealings: dealings).publicKey
                == old.publicKey)
    }

    @Test(
        "a dealer with a wrong constant term, or the wrong number of commitments, fails the dealer check",
        arguments: Curve.allCases)
    func dishonestDealers(curve: Curve) throws {
        let world = try Resharing2of2(curve: curve, seed: "dealer \(curve)")
        let dealings = try world.honestDealings()
        let honest = dealings[1]
        // D_{2,0} moved by G: its sub-shares are consistent with its commitments, but it did not deal λ_2·x_2.
        let shift = Scalar(1, curve: curve)
        let constant = try #require(try Self.constantTerm(of: honest, shares: world.shares, plan: world.plan))
        let polynomial = try Polynomial(coefficients: [
            constant + shift,
            Scalar.random(on: curve, using: world.random),
        ])
        let wrongConstant = Dealing(
            dealerIndex: 2, commitments: try polynomial.commitments(),
            subShares: [1: polynomial.evaluate(atIndex: 1), 2: polynomial.evaluate(atIndex: 2)])
        #expect(throws: ShareRecoveryError(.dealerCheckFailed, "")) {
            try ResharingReceiver.receive(partyIndex: 1, plan: world.plan, dealings: [dealings[0], wrongConstant])
        }
        for commitments in [Array(honest.commitments.prefix(1)), honest.commitments + [Point.generator(on: curve)]] {
            let misshapen = Dealing(dealerIndex: 2, commitments: commitments, subShares: honest.subShares)
            #expect(throws: ShareRecoveryError(.dealerCheckFailed, "")) {
                try ResharingReceiver.receive(partyIndex: 1, plan: world.plan, dealings: [dealings[0], misshapen])
            }
        }
    }

    /// λ_j·x_j of an honest dealer, recomputed from its old share.
    static func constantTerm(of dealing: Dealing, shares: [ShareRecord], plan: ResharingPlan) throws -> Scalar? {
        guard let share = shares.first(where: { $0.partyIndex == dealing.dealerIndex }), let secret = share.secret
        else { return nil }
        return try Shamir.lagrangeCoefficientAtZero(
            index: dealing.dealerIndex, indices: plan.dealers, curve: share.curve) * secret
    }

    @Test(
        "an old share mixed with a new one: refused as a record, as a dealer, and by the receiver",
        arguments: Curve.allCases)
    func oldShareMixedWithNew(curve: Curve) throws {
        let world = try Resharing2of2(curve: curve, seed: "mixed \(curve)")
        let newSet = try ResharingReceiver.receive(
            partyIndices: [1, 2], plan: world.plan, dealings: try world.honestDealings())
        let old = world.shares[0]
        // The old secret claiming a place in the new set does not match the new commitments.
        #expect(throws: ShareRecoveryError(.invalidShare, "")) {
            try ShareRecord(
                walletId: old.walletId, curve: curve, kind: .signing, threshold: 2, parties: 2, partyIndex: 1,
                generation: newSet[0].generation, setId: newSet[0].setId, secret: old.secret,
                commitments: newSet[0].commitments)
        }
        // A plan over the new set does not take the old share as a dealer.
        let nextPlan = try ResharingPlan(
            oldSet: newSet[0], dealers: [1, 2], newThreshold: 2, newParties: 2, newKind: .signing, newGeneration: 2,
            newSetId: .random(using: world.random))
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            try ResharingDealer.deal(share: old, plan: nextPlan)
        }
        // Dealt anyway (λ_1·x_1 of the old set under the new plan), the dealing fails D_{1,0} == λ_1·X'_1.
        let lambda = try Shamir.lagrangeCoefficientAtZero(index: 1, indices: [1, 2], curve: curve)
        let polynomial = try Polynomial(coefficients: [
            lambda * (try #require(old.secret)), Scalar.random(on: curve, using: world.random),
        ])
        let stale = Dealing(
            dealerIndex: 1, commitments: try polynomial.commitments(),
            subShares: [1: polynomial.evaluate(atIndex: 1), 2: polynomial.evaluate(atIndex: 2)])
        let fresh = try ResharingDealer.deal(share: newSet[1], plan: nextPlan, using: world.random)
        #expect(throws: ShareRecoveryError(.dealerCheckFailed, "")) {
            try ResharingReceiver.receive(partyIndex: 2, plan: nextPlan, dealings: [stale, fresh])
        }
        let honest = try ResharingDealer.deal(share: newSet[0], plan: nextPlan, using: world.random)
        #expect(
            try ResharingReceiver.receive(partyIndex: 2, plan: nextPlan, dealings: [honest, fresh]).publicKey
                == old.publicKey)
    }

    // MARK: Store

    @Test("the store refuses to stage a replayed older (or the same) generation; a newer one is fine")
    func replayedOlderGeneration() async throws {
        let directory = StoreTestSupport.makeDirectory("replay")
        defer { StoreTestSupport.removeDirectory(directory) }
        let pin = StoreTestSupport.passcode("482916")
        let store = try await StoreTestSupport.open(directory)
        try await store.createPasscode(pin, confirmation: pin)
        let old = try StoreTestSupport.share(generation: 3)
        try await store.stage(old)
        try await store.promoteStaged()
        let current = try await store.currentShare()
        for generation: UInt32 in [0, 2, 3] {
            await StoreTestSupport.expectError(.invalidParameters) {
                try await store.stage(try StoreTestSupport.share(generation: generation))
            }
            #expect(try await store.stagedShare() == nil, "generation \(generation) was not staged")
            #expect(try await store.currentShare() == current)
        }
        try await store.stage(try StoreTestSupport.share(generation: 4))
        try await store.promoteStaged()
        #expect(try await store.currentShare()?.generation == 4)
        // The old generation 3, replayed after 4 is current, is refused too.
        await StoreTestSupport.expectError(.invalidParameters) { try await store.stage(old) }
    }

    // MARK: Helpers

    static func offlineEngine(seed: String) throws -> RecoveryEngine {
        let random = DeterministicRandom(seed: Array(seed.utf8))
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: SealingKeyPair(using: random), shareSource: integrator, random: random)
        return RecoveryEngine(
            configuration: .init(
                userId: "user-bad", custodian: custodian, shareStore: InMemorySigningShareStore(), argon2: .minimum,
                random: random))
    }
}
