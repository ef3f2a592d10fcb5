import ShareCrypto
import TestSupport
import Testing

/// `ripemd160/test-vectors.json`.
private struct RIPEMD160File: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let message: String
        let repetitions: Int
        let digest: HexBytes
    }
    let cases: [Case]
}

@Suite("RIPEMD-160 and HASH160 vectors")
struct RIPEMD160VectorTests {
    @Test("the designers' test vectors, through this machine's libcrypto (OpenSSL 3's default provider)")
    func published() throws {
        let file = try VectorFile.load("ripemd160/test-vectors.json", as: RIPEMD160File.self)
        #expect(file.cases.count == 9)
        for test in file.cases {
            let message = [UInt8]((0..<test.repetitions).flatMap { _ in Array(test.message.utf8) })
            #expect(
                try RIPEMD160.hash(message) == test.digest.bytes, "\"\(test.message.prefix(20))\" × \(test.repetitions)"
            )
        }
    }

    @Test("HASH160 is RIPEMD-160 over SHA-256, 20 bytes")
    func hash160() throws {
        let key = Array("any compressed key".utf8)
        let digest = try Hash160.hash(key)
        #expect(digest.count == 20)
        #expect(digest == (try RIPEMD160.hash(SHA256.hash(key))))
        #expect(digest != (try RIPEMD160.hash(key)))
    }
}
