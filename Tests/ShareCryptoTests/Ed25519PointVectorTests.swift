import Foundation
import ShareCrypto
import TestSupport
import Testing

/// `libsodium-tests/ed25519_point_constants.extracted.json`: constants of libsodium's core_ed25519 test with the
/// `crypto_core_ed25519_is_valid_point` outcome the test asserts (null for entries that are scalars, not points),
/// plus the ed25519-speccheck public keys with the outcome observed through PyNaCl (libsodium).
struct Ed25519ConstantsFile: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let name: String
        let hex: HexBytes
        let libsodium_test_asserts_is_valid_point: Bool?
        let pynacl_is_valid_point: Bool
    }
    let note: String
    let cases: [Case]
}

/// `ed25519-speccheck/cases.json`: twelve signatures on edge-case keys.
struct SpeccheckCase: Decodable, Sendable {
    let message: HexBytes
    let pub_key: HexBytes
    let signature: HexBytes
}

/// `wycheproof/testvectors_v1/ed25519_test.json` (EddsaVerify): only the group keys are used.
private struct EddsaGroup: Decodable, Sendable {
    struct PublicKey: Decodable, Sendable {
        let curve: String
        let pk: HexBytes
    }
    let publicKey: PublicKey
    let tests: [EddsaCase]
}

private struct EddsaCase: Decodable, Sendable {
    let tcId: Int
}

@Suite("ed25519 point validation vectors")
struct Ed25519PointVectorTests {
    private static func expectVerdict(_ bytes: [UInt8], accept: Bool, _ context: Comment) throws {
        if accept {
            let point = try Point(rawRepresentation: bytes, curve: .ed25519)
            #expect(point.rawRepresentation == bytes, context)
        } else {
            #expect(throws: ShareCryptoError(.invalidPoint, ""), context) {
                try Point(rawRepresentation: bytes, curve: .ed25519)
            }
        }
    }

    @Test("libsodium core_ed25519 constants: accepted exactly when libsodium's test asserts a valid point")
    func libsodiumConstants() throws {
        let file = try VectorFile.load(
            "libsodium-tests/ed25519_point_constants.extracted.json", as: Ed25519ConstantsFile.self)
        var count = 0
        var scalars: [String] = []
        for test in file.cases {
            guard let valid = test.libsodium_test_asserts_is_valid_point else {
                scalars.append(test.name)
                continue
            }
            count += 1
            try Self.expectVerdict(test.hex.bytes, accept: valid, Comment(rawValue: "\(test.name) \(test.hex)"))
        }
        print(
            "libsodium ed25519_point_constants: skipped \(scalars.count) entries with no asserted point verdict: \(scalars)"
        )
        VectorFile.report("libsodium-tests ed25519_point_constants.extracted.json", cases: count)
    }

    @Test("libsodium core_ed25519 constants: every entry agrees with the observed crypto_core_ed25519_is_valid_point")
    func observedLibsodiumVerdicts() throws {
        let file = try VectorFile.load(
            "libsodium-tests/ed25519_point_constants.extracted.json", as: Ed25519ConstantsFile.self)
        for test in file.cases {
            try Self.expectVerdict(
                test.hex.bytes, accept: test.pynacl_is_valid_point, Comment(rawValue: "\(test.name) \(test.hex)"))
        }
        VectorFile.report(
            "libsodium-tests ed25519_point_constants.extracted.json (observed verdicts)", cases: file.cases.count)
    }

    /// The condition table of the speccheck README: vector index → order of A ("small", "mixed", "L", "small*"...).
    private static func speccheckKeyOrders() throws -> [Int: String] {
        let readme = try VectorFile.text("ed25519-speccheck/README.md")
        var orders: [Int: String] = [:]
        for line in readme.split(separator: "\n") {
            let columns = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            // | index | msg | sig | S | A ord | R ord | ...
            guard columns.count > 5, let index = Int(columns[1]) else { continue }
            orders[index] = columns[5]
        }
        return orders
    }

    @Test("ed25519-speccheck public keys: only full-order canonical keys are accepted (libsodium semantics)")
    func speccheckKeys() throws {
        let cases = try VectorFile.load("ed25519-speccheck/cases.json", as: [SpeccheckCase].self)
        let orders = try Self.speccheckKeyOrders()
        let observed = try VectorFile.load(
            "libsodium-tests/ed25519_point_constants.extracted.json", as: Ed25519ConstantsFile.self)
        #expect(orders.count == cases.count, "the README table describes every vector")
        for (index, test) in cases.enumerated() {
            let order = try #require(orders[index], "vector \(index) is missing from the README table")
            // Small, mixed and non-canonical ("small*") keys are out; only A of order L is a valid point.
            let expected = order == "L"
            let context = Comment(rawValue: "speccheck vector \(index), A order \(order), \(test.pub_key)")
            try Self.expectVerdict(test.pub_key.bytes, accept: expected, context)
            // The libsodium observation for the same key says the same.
            if let seen = observed.cases.first(where: { $0.name == "speccheck_case\(index)_pub_key" }) {
                #expect(seen.hex == test.pub_key, context)
                #expect(seen.pynacl_is_valid_point == expected, context)
            }
        }
        VectorFile.report("ed25519-speccheck cases.json (public keys)", cases: cases.count)
    }

    @Test("Wycheproof ed25519_test.json: every group's public key is a valid point")
    func wycheproofGroupKeys() throws {
        let file = try VectorFile.load(
            "wycheproof/testvectors_v1/ed25519_test.json", as: WycheproofFile<EddsaGroup>.self)
        for group in file.testGroups {
            #expect(group.publicKey.curve == "edwards25519")
            try Self.expectVerdict(
                group.publicKey.pk.bytes, accept: true, Comment(rawValue: "pk \(group.publicKey.pk)"))
        }
        #expect(file.testGroups.reduce(0) { $0 + $1.tests.count } == file.numberOfTests)
        VectorFile.report("wycheproof ed25519_test.json (group public keys)", cases: file.testGroups.count)
    }
}
