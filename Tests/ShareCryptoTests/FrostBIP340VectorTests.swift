import ShareCrypto
import TestSupport
import Testing

// The BIP draft's vectors (`frost/bip-frost-signing`, see its test_vectors_summary.md): groups per
// (t, n) with shared inputs that cases index into. Identifiers there are zero-based; the API takes
// party indices, so every id becomes id + 1 (docs/formats.md §11).

/// The `error` object of a case.
private struct BIPError: Decodable, Sendable {
    let type: String
    let message: String?
    let signer_index: Int?
    let contrib: String?
}

/// One case of any of the files; each file uses a subset of the fields.
private struct BIPCase: Decodable, Sendable {
    let tc_id: Int
    let comment: String
    let my_id: Int?
    let ids: [Int]?
    let pubshare_indices: [Int]?
    let pubnonce_indices: [Int]?
    let secshare_index: Int?
    let secnonce_index: Int?
    let tweak_indices: [Int]?
    let tweaks: [HexBytes]?
    let is_xonly: [Bool]?
    let aggnonce: HexBytes?
    let aggothernonce: HexBytes?
    let rand: HexBytes?
    let psig: HexBytes?
    let psigs: [HexBytes]?
    let signer_index: Int?
    let msg: HexBytes?
    let expected: BIPExpected?
    let error: BIPError?
}

/// A (t, n) group with its shared inputs.
private struct BIPGroup: Decodable, Sendable {
    let tg_id: String
    let t: Int
    let n: Int
    let thresh_pk: HexBytes
    let pubshares: [HexBytes]
    let pubnonces: [HexBytes]?
    let secshares: [HexBytes]?
    let secnonces: [HexBytes]?
    let tweaks: [HexBytes]?
    let valid_tests: [BIPCase]
    let error_tests: [BIPCase]?
    let sign_error_tests: [BIPCase]?
    let verify_fail_tests: [BIPCase]?
    let verify_error_tests: [BIPCase]?
}

private struct BIPGroupFile: Decodable, Sendable { let test_groups: [BIPGroup] }

/// `expected` is a hex string or a pair of them, depending on the file.
private struct BIPExpected: Decodable, Sendable {
    let values: [HexBytes]
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let pair = try? container.decode([HexBytes].self) {
            values = pair
        } else {
            values = [try container.decode(HexBytes.self)]
        }
    }
}

private struct NonceGenFile: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let tc_id: Int
        let rand_: HexBytes
        let secshare: HexBytes?
        let pubshare: HexBytes?
        let thresh_pk: HexBytes?
        let msg: HexBytes?
        let extra_in: HexBytes?
        let expected: [HexBytes]
    }
    let valid_tests: [Case]
}

private struct NonceAggFile: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let tc_id: Int
        let pubnonce_indices: [Int]
        let expected: HexBytes?
        let error: BIPError?
    }
    let pubnonces: [HexBytes]
    let valid_tests: [Case]
    let error_tests: [Case]
}

/// What our API must throw for a vector's error: the stable code and the party index it names.
private struct ExpectedFailure: Equatable, CustomStringConvertible {
    let code: ShareCryptoError.Code
    let party: Int?
    var description: String { "\(code) party \(party.map(String.init) ?? "none")" }
}

/// Maps a vector's error to ours. `position → party` turns a blamed list position into a party index.
private func expectedFailure(_ error: BIPError, testCase: BIPCase) throws -> ExpectedFailure {
    let ids = testCase.ids ?? []
    let myParty = testCase.my_id.map { $0 + 1 }
    if error.type == "InvalidContributionError" {
        let party = try error.signer_index.map { position in
            try #require(ids.indices.contains(position) ? ids[position] + 1 : nil)
        }
        switch error.contrib {
        case "aggnonce", "aggothernonce": return ExpectedFailure(code: .invalidPoint, party: nil)
        case "pubnonce": return ExpectedFailure(code: .invalidPoint, party: party)
        case "psig": return ExpectedFailure(code: .invalidSignatureShare, party: party)
        default: Issue.record("unknown contribution \(error.contrib ?? "nil")")
        }
    }
    let message = try #require(error.message)
    if message.hasPrefix("Invalid pubshare at index ") {
        let position = try #require(Int(message.dropFirst("Invalid pubshare at index ".count).dropLast()))
        return ExpectedFailure(code: .invalidPoint, party: ids[position] + 1)
    }
    switch message {
    case "The signer's id must be present in the participant identifier list.":
        return ExpectedFailure(code: .invalidParameters, party: myParty)
    case "The participant identifier list contains duplicate elements.",
        "The number of signers must be between t and n.",
        "The psigs and ids arrays must have the same length.":
        return ExpectedFailure(code: .invalidParameters, party: nil)
    case "The participant identifier at index 0 is out of range.":
        return ExpectedFailure(code: .invalidParameters, party: nil)
    // Ours is stricter than "in the list": the share must be the signer's own public share.
    case "The signer's pubshare must be included in the list of pubshares.":
        return ExpectedFailure(code: .invalidShare, party: myParty)
    case "The provided key material is incorrect.": return ExpectedFailure(code: .publicKeyMismatch, party: nil)
    case "first secnonce value is out of range.", "second secnonce value is out of range.",
        "The tweak value is out of range.":
        return ExpectedFailure(code: .invalidScalar, party: nil)
    case "The signer's secret share value is out of range.":
        return ExpectedFailure(code: .invalidScalar, party: myParty)
    case "The result of tweaking cannot be infinity.": return ExpectedFailure(code: .invalidPoint, party: nil)
    case "The tweak must be a 32-byte array.": return ExpectedFailure(code: .invalidLength, party: nil)
    default:
        Issue.record("unmapped vector error \(message)")
        return ExpectedFailure(code: .backendFailure, party: nil)
    }
}

/// Runs `body` and checks it throws `expected`.
private func expectFailure(_ expected: ExpectedFailure, _ context: Comment, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), nothing thrown — \(context)")
    } catch let error as ShareCryptoError {
        #expect(ExpectedFailure(code: error.code, party: error.party) == expected, "\(context): \(error)")
    } catch {
        Issue.record("unexpected \(error) — \(context)")
    }
}

/// The inputs a case selects from its group, as our API takes them.
private struct Selection {
    let group: BIPGroup
    let testCase: BIPCase

    var parties: [Int] { (testCase.ids ?? []).map { $0 + 1 } }
    var context: Comment { Comment(rawValue: "\(group.tg_id) tc \(testCase.tc_id): \(testCase.comment)") }
    var message: [UInt8] { testCase.msg?.bytes ?? [] }

    func signersContext() throws -> FrostBIP340.SignersContext {
        let pubshares = try #require(testCase.pubshare_indices).map { group.pubshares[$0].bytes }
        return try FrostBIP340.SignersContext(
            threshold: group.t, parties: group.n, signers: parties, publicShares: pubshares,
            groupKey: group.thresh_pk.bytes)
    }

    /// Tweaks from `tweak_indices` (into the group) or inline `tweaks`, with their modes.
    func tweaks() throws -> [FrostBIP340.Tweak] {
        let values =
            try testCase.tweak_indices.map { try $0.map { try #require(group.tweaks)[$0].bytes } } ?? testCase.tweaks?
            .map(\.bytes) ?? []
        let modes = testCase.is_xonly ?? []
        try #require(values.count == modes.count, "tweaks and modes differ in length")
        return try zip(values, modes).map { try FrostBIP340.Tweak(rawRepresentation: $0, isXOnly: $1) }
    }

    /// Party index → pubnonce bytes, from `pubnonce_indices`.
    func pubnonces() throws -> [Int: [UInt8]] {
        let indices = try #require(testCase.pubnonce_indices)
        let all = try #require(group.pubnonces)
        return Dictionary(uniqueKeysWithValues: zip(parties, indices.map { all[$0].bytes }))
    }

    func secretNonce(_ index: Int) throws -> FrostSigningNonce {
        let bytes = try #require(group.secnonces)[index].bytes
        return try FrostSigningNonce(
            hiding: Scalar(rawRepresentation: bytes[0..<32], curve: .secp256k1),
            binding: Scalar(rawRepresentation: bytes[32...], curve: .secp256k1))
    }

    func secretShare(_ index: Int) throws -> Scalar {
        try Scalar(rawRepresentation: try #require(group.secshares)[index].bytes, curve: .secp256k1)
    }

    /// The whole Sign path from encoded inputs, in the draft's order of checks.
    func sign() throws -> Scalar {
        let signers = try signersContext()
        let session = try FrostBIP340.Session(
            signersContext: signers,
            aggregateNonce: FrostBIP340.AggregateNonce(rawRepresentation: try #require(testCase.aggnonce).bytes),
            message: message, tweaks: tweaks())
        let nonce = try secretNonce(try #require(testCase.secnonce_index))
        let share = try secretShare(try #require(testCase.secshare_index))
        return try FrostBIP340.sign(
            nonce: nonce, share: share, index: try #require(testCase.my_id) + 1, session: session)
    }
}

@Suite("FROST signing, BIP draft (mode bip340)")
struct FrostBIP340VectorTests {
    @Test("nonce_gen: secnonce and pubnonce from rand' and the optional inputs")
    func nonceGen() throws {
        let path = "frost/bip-frost-signing/nonce_gen_vectors.json"
        let file = try VectorFile.load(path, as: NonceGenFile.self)
        for test in file.valid_tests {
            let context = Comment(rawValue: "nonce_gen tc \(test.tc_id)")
            let random = FixedRandom([test.rand_.bytes])
            let nonce = FrostBIP340.generateNonce(
                share: try test.secshare.map { try Scalar(rawRepresentation: $0.bytes, curve: .secp256k1) },
                publicShare: try test.pubshare.map { try Point(rawRepresentation: $0.bytes, curve: .secp256k1) },
                groupKey: try test.thresh_pk.map { try Point(xOnly: $0.bytes) }, message: test.msg?.bytes,
                extraInput: test.extra_in?.bytes,
                using: random)
            #expect(random.isExhausted, context)
            #expect(nonce.commitment.rawRepresentation == test.expected[1].bytes, context)
            // k ↦ k·G is injective below the order: the published secnonce has our commitment, so it is ours.
            let secnonce = test.expected[0].bytes
            let published = try FrostSigningNonce(
                hiding: Scalar(rawRepresentation: secnonce[0..<32], curve: .secp256k1),
                binding: Scalar(rawRepresentation: secnonce[32...], curve: .secp256k1))
            #expect(published.commitment == nonce.commitment, context)
        }
        VectorFile.report(path, cases: file.valid_tests.count)
    }

    @Test("nonce_agg: aggregate nonces, the identity as zeros, and the party blamed for a bad pubnonce")
    func nonceAgg() throws {
        let path = "frost/bip-frost-signing/nonce_agg_vectors.json"
        let file = try VectorFile.load(path, as: NonceAggFile.self)
        // No identifiers here: position k is party k + 1.
        func run(_ test: NonceAggFile.Case) throws -> FrostBIP340.AggregateNonce {
            let parties = test.pubnonce_indices.indices.map { $0 + 1 }
            let pubnonces = Dictionary(
                uniqueKeysWithValues: zip(parties, test.pubnonce_indices.map { file.pubnonces[$0].bytes }))
            return try FrostBIP340.aggregateNonces(pubnonces, order: parties)
        }
        for test in file.valid_tests {
            let aggregate = try run(test)
            #expect(aggregate.rawRepresentation == test.expected?.bytes, "nonce_agg tc \(test.tc_id)")
            #expect(try FrostBIP340.AggregateNonce(rawRepresentation: aggregate.rawRepresentation) == aggregate)
        }
        for test in file.error_tests {
            let blamed = try #require(test.error?.signer_index) + 1
            expectFailure(ExpectedFailure(code: .invalidPoint, party: blamed), "nonce_agg tc \(test.tc_id)") {
                _ = try run(test)
            }
        }
        VectorFile.report(path, cases: file.valid_tests.count + file.error_tests.count)
    }

    @Test("sign_verify: partial signatures, every sign error, verify failures and verify errors with the party blamed")
    func signVerify() throws {
        let path = "frost/bip-frost-signing/sign_verify_vectors.json"
        let file = try VectorFile.load(path, as: BIPGroupFile.self)
        var count = 0
        var fullSignatures = 0
        for group in file.test_groups {
            for test in group.valid_tests {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let psig = try selection.sign()
                #expect(psig.rawRepresentation.revealedBytes() == test.expected?.values.first?.bytes, selection.context)

                // The pubnonces aggregate to the case's aggnonce, and the partial signature verifies from them.
                let pubnonces = try selection.pubnonces()
                let signers = try selection.signersContext()
                #expect(
                    try FrostBIP340.aggregateNonces(pubnonces, order: selection.parties).rawRepresentation
                        == test.aggnonce?.bytes,
                    selection.context)
                #expect(
                    try FrostBIP340.verifyPartialSignature(
                        psig, pubnonces: pubnonces, signersContext: signers, tweaks: [], message: selection.message,
                        index: try #require(test.my_id) + 1), selection.context)
                if try signAll(selection) { fullSignatures += 1 }
            }
            for test in group.sign_error_tests ?? [] {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let failure = try expectedFailure(try #require(test.error), testCase: test)
                expectFailure(failure, selection.context) { _ = try selection.sign() }
            }
            for test in (group.verify_fail_tests ?? []) + (group.verify_error_tests ?? []) {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let verify = {
                    // A partial signature that does not parse (≥ n) fails verification.
                    guard let psig = try? Scalar(rawRepresentation: try #require(test.psig).bytes, curve: .secp256k1)
                    else { return false }
                    return try FrostBIP340.verifyPartialSignature(
                        psig, pubnonces: selection.pubnonces(), signersContext: selection.signersContext(), tweaks: [],
                        message: selection.message, index: selection.parties[try #require(test.signer_index)])
                }
                if let error = test.error {
                    expectFailure(try expectedFailure(error, testCase: test), selection.context) { _ = try verify() }
                } else {
                    #expect(try verify() == false, selection.context)
                }
            }
        }
        print("sign_verify: \(fullSignatures) valid cases also signed by every signer and verified by libsecp256k1")
        #expect(fullSignatures > 0)
        VectorFile.report(path, cases: count)
    }

    /// When every signer of a valid case has its secnonce in the group (pubnonce i = secnonce i's),
    /// all of them sign, and the aggregate must pass libsecp256k1's BIP-340 verification.
    private func signAll(_ selection: Selection) throws -> Bool {
        let indices = try #require(selection.testCase.pubnonce_indices)
        // A case that points a signer at a crafted pubnonce (or an invalid secnonce) has no full signing.
        let nonces = indices.compactMap { try? selection.secretNonce($0) }
        let pubnonces = try selection.pubnonces()
        guard nonces.count == indices.count,
            zip(selection.parties, nonces).allSatisfy({ pubnonces[$0]! == $1.commitment.rawRepresentation })
        else { return false }
        let signers = try selection.signersContext()
        let commitments = Dictionary(uniqueKeysWithValues: zip(selection.parties, nonces.map(\.commitment)))
        let session = try FrostBIP340.Session(
            signersContext: signers, aggregateNonce: FrostBIP340.AggregateNonce(aggregating: nonces.map(\.commitment)),
            message: selection.message)
        var partials: [Int: Scalar] = [:]
        for (party, (nonce, secshareIndex)) in zip(selection.parties, zip(nonces, indices)) {
            partials[party] = try FrostBIP340.sign(
                nonce: nonce, share: selection.secretShare(secshareIndex), index: party, session: session)
        }
        let signature = try FrostBIP340.aggregateVerified(
            partialSignatures: partials, commitments: commitments, session: session)
        #expect(
            FrostBIP340.verify(
                signature: signature, message: selection.message, xOnlyKey: signers.groupKey.xOnlyRepresentation),
            selection.context)
        // A wrong partial signature from any one signer is named.
        for party in selection.parties {
            var tampered = partials
            tampered[party] = partials[party]! + Scalar(1, curve: .secp256k1)
            expectFailure(ExpectedFailure(code: .invalidSignatureShare, party: party), selection.context) {
                _ = try FrostBIP340.aggregateVerified(
                    partialSignatures: tampered, commitments: commitments, session: session)
            }
        }
        return true
    }

    @Test("tweak: partial signatures under plain and x-only tweaks, and tweak errors")
    func tweaks() throws {
        let path = "frost/bip-frost-signing/tweak_vectors.json"
        let file = try VectorFile.load(path, as: BIPGroupFile.self)
        var count = 0
        var inexpressible = 0
        for group in file.test_groups {
            for test in group.valid_tests {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let psig = try selection.sign()
                #expect(psig.rawRepresentation.revealedBytes() == test.expected?.values.first?.bytes, selection.context)
                #expect(
                    try FrostBIP340.verifyPartialSignature(
                        psig, pubnonces: selection.pubnonces(), signersContext: selection.signersContext(),
                        tweaks: selection.tweaks(),
                        message: selection.message, index: try #require(test.my_id) + 1), selection.context)
            }
            for test in group.error_tests ?? [] {
                let selection = Selection(group: group, testCase: test)
                let error = try #require(test.error)
                // Each of our tweaks carries its own mode, so lists of different lengths cannot be built.
                if error.message == "The tweaks and is_xonly arrays must have the same length." {
                    inexpressible += 1
                    continue
                }
                count += 1
                expectFailure(try expectedFailure(error, testCase: test), selection.context) {
                    _ = try selection.sign()
                }
            }
        }
        print("tweak: \(inexpressible) cases (mismatched tweak and mode lists) cannot be expressed in the typed API")
        VectorFile.report(path, cases: count)
    }

    @Test("sig_agg: aggregate signatures (with tweaks) that libsecp256k1 verifies, and the party blamed for a bad psig")
    func sigAgg() throws {
        let path = "frost/bip-frost-signing/sig_agg_vectors.json"
        let file = try VectorFile.load(path, as: BIPGroupFile.self)
        var count = 0
        for group in file.test_groups {
            for test in group.valid_tests + (group.error_tests ?? []) {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let aggregate = {
                    let session = try FrostBIP340.Session(
                        signersContext: selection.signersContext(),
                        aggregateNonce: FrostBIP340.AggregateNonce(
                            rawRepresentation: try #require(test.aggnonce).bytes),
                        message: selection.message, tweaks: selection.tweaks())
                    let psigs = try #require(test.psigs)
                    var partials: [Int: Scalar] = [:]
                    for (party, psig) in zip(selection.parties, psigs) {
                        partials[party] = try FrostSignatureShare.parse(psig.bytes, curve: .secp256k1, party: party)
                    }
                    return (try FrostBIP340.aggregate(partialSignatures: partials, session: session), session)
                }
                if let error = test.error {
                    expectFailure(try expectedFailure(error, testCase: test), selection.context) { _ = try aggregate() }
                    continue
                }
                let (signature, session) = try aggregate()
                #expect(signature == test.expected?.values.first?.bytes, selection.context)
                #expect(
                    FrostBIP340.verify(
                        signature: signature, message: selection.message,
                        xOnlyKey: session.tweakedKey.xOnlyRepresentation),
                    selection.context)
            }
        }
        VectorFile.report(path, cases: count)
    }

    @Test("det_sign: deterministic pubnonce and partial signature, and its errors")
    func deterministicSign() throws {
        let path = "frost/bip-frost-signing/det_sign_vectors.json"
        let file = try VectorFile.load(path, as: BIPGroupFile.self)
        var count = 0
        for group in file.test_groups {
            for test in group.valid_tests + (group.error_tests ?? []) {
                count += 1
                let selection = Selection(group: group, testCase: test)
                let run = {
                    try FrostBIP340.deterministicSign(
                        share: selection.secretShare(try #require(test.secshare_index)),
                        index: try #require(test.my_id) + 1,
                        aggregateOtherNonce: test.aggothernonce?.bytes, signersContext: selection.signersContext(),
                        tweaks: selection.tweaks(), message: selection.message, auxiliaryRandomness: test.rand?.bytes)
                }
                if let error = test.error {
                    expectFailure(try expectedFailure(error, testCase: test), selection.context) { _ = try run() }
                    continue
                }
                let (commitment, psig) = try run()
                let values = try #require(test.expected?.values)
                #expect(commitment.rawRepresentation == values[0].bytes, selection.context)
                #expect(psig.rawRepresentation.revealedBytes() == values[1].bytes, selection.context)
            }
        }
        VectorFile.report(path, cases: count)
    }
}
