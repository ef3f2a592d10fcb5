import ShareCrypto
import TestSupport
import Testing

/// `rfc4231/hmac-sha512.json`.
private struct RFC4231File: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let testCase: Int
        let key: HexBytes
        let data: HexBytes
        let hmacSha512: HexBytes
    }
    let cases: [Case]
}

@Suite("HMAC-SHA512 vectors")
struct HMACSHA512VectorTests {
    @Test("RFC 4231 test cases 1-4, 6 and 7 (keys shorter and longer than the block)")
    func rfc4231() throws {
        let file = try VectorFile.load("rfc4231/hmac-sha512.json", as: RFC4231File.self)
        #expect(file.cases.count == 6)
        for test in file.cases {
            let tag = HMACSHA512.authenticationCode(key: test.key.bytes, message: test.data.bytes)
            #expect(tag == test.hmacSha512.bytes, "RFC 4231 test case \(test.testCase)")
            // One changed message byte changes the tag.
            #expect(
                HMACSHA512.authenticationCode(key: test.key.bytes, message: test.data.bytes + [0])
                    != test.hmacSha512.bytes)
        }
    }
}
