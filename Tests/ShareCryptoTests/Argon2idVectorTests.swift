import ShareCrypto
import TestSupport
import Testing

/// `libsodium-tests/pwhash_argon2id_tv.extracted.json`: libsodium's own `crypto_pwhash` Argon2id13 known answers.
private struct PwhashFile: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let passwd_hex: HexBytes
        let salt_hex: HexBytes
        let outlen: Int
        let opslimit: UInt64
        let memlimit_bytes: Int
        let alg: String
        let expected_hex: HexBytes?
        let expect_failure: Bool
    }
    let source: String
    let vectors: [Case]
}

@Suite("Argon2id vectors and bounds")
struct Argon2idVectorTests {
    @Test("libsodium pwhash_argon2id tv(): every case through Argon2id.hash")
    func libsodiumKnownAnswers() throws {
        let file = try VectorFile.load("libsodium-tests/pwhash_argon2id_tv.extracted.json", as: PwhashFile.self)
        var failures = 0
        for (index, test) in file.vectors.enumerated() {
            let context = Comment(
                rawValue: "vector \(index): outlen \(test.outlen), ops \(test.opslimit), mem \(test.memlimit_bytes)")
            #expect(test.alg == "argon2id13", context)
            if test.expect_failure {
                failures += 1
                #expect(test.expected_hex == nil, context)
                #expect(throws: ShareCryptoError.self, context) {
                    try Argon2id.hash(
                        password: test.passwd_hex.secure, salt: test.salt_hex.bytes, opslimit: test.opslimit,
                        memlimitBytes: test.memlimit_bytes, outputCount: test.outlen)
                }
            } else {
                let expected = try #require(test.expected_hex, context)
                let key = try Argon2id.hash(
                    password: test.passwd_hex.secure, salt: test.salt_hex.bytes, opslimit: test.opslimit,
                    memlimitBytes: test.memlimit_bytes, outputCount: test.outlen)
                #expect(key.revealedBytes() == expected.bytes, context)
            }
        }
        print("libsodium pwhash_argon2id_tv: \(failures) expected failures")
        VectorFile.report("libsodium-tests pwhash_argon2id_tv.extracted.json", cases: file.vectors.count)
    }

    @Test(
        "parameters outside docs/formats.md §5 bounds are rejected before any work",
        arguments: [(0, 8), (17, 8), (1, 7), (1, 1_048_577), (0, 0), (UInt32.max, UInt32.max)] as [(UInt32, UInt32)])
    func outOfBounds(opslimit: UInt32, memlimitKiB: UInt32) {
        #expect(throws: ShareCryptoError(.invalidKdfParameters, "")) {
            try Argon2idParameters(opslimit: opslimit, memlimitKiB: memlimitKiB)
        }
    }

    @Test(
        "the bounds themselves are accepted",
        arguments: [(1, 8), (16, 8), (1, 1_048_576), (3, 65_536)] as [(UInt32, UInt32)])
    func inBounds(opslimit: UInt32, memlimitKiB: UInt32) throws {
        let parameters = try Argon2idParameters(opslimit: opslimit, memlimitKiB: memlimitKiB)
        #expect(parameters.opslimit == opslimit)
        #expect(parameters.memlimitKiB == memlimitKiB)
    }

    @Test("an empty password is rejected")
    func emptyPassword() {
        #expect(throws: ShareCryptoError(.emptySecret, "")) {
            try Argon2id.deriveKey(
                password: SecureBytes(zeros: 0), salt: [UInt8](repeating: 7, count: 16), parameters: .minimum)
        }
    }

    @Test("deriveKey is crypto_pwhash with memlimit in KiB")
    func deriveKeyMatchesHash() throws {
        let password = SecureBytes(copying: Array("correct horse".utf8))
        let salt = [UInt8](repeating: 0x5A, count: Argon2id.saltCount)
        let derived = try Argon2id.deriveKey(password: password, salt: salt, parameters: .minimum)
        let raw = try Argon2id.hash(
            password: password, salt: salt, opslimit: 1, memlimitBytes: 8 * 1024, outputCount: 32)
        #expect(derived == raw)
        #expect(throws: ShareCryptoError(.invalidLength, "")) {
            try Argon2id.deriveKey(password: password, salt: [UInt8](repeating: 0, count: 15), parameters: .minimum)
        }
    }
}
