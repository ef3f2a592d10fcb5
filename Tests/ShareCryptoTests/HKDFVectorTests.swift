import ShareCrypto
import TestSupport
import Testing

/// `wycheproof/testvectors_v1/hkdf_sha256_test.json` (HkdfTest).
private struct HkdfGroup: Decodable, Sendable {
    let keySize: Int
    let tests: [HkdfCase]
}

private struct HkdfCase: Decodable, Sendable {
    let tcId: Int
    let comment: String
    let ikm: HexBytes
    let salt: HexBytes
    let info: HexBytes
    let size: Int
    let okm: HexBytes
    let result: WycheproofResult
    let flags: [String]
}

/// `rfc-kats/rfc5869_hkdf_sha256.json`: RFC 5869 A.1–A.3 with the intermediate PRK.
private struct RFC5869File: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let wycheproof_tcId: Int
        let ikm: HexBytes
        let salt: HexBytes
        let info: HexBytes
        let L: Int
        let prk_computed: HexBytes
        let okm: HexBytes
    }
    let cases: [Case]
}

@Suite("HKDF-SHA256 vectors")
struct HKDFVectorTests {
    /// RFC 5869 §2.3: L ≤ 255·HashLen.
    static let rfcMaximumOutput = 255 * 32

    @Test("Wycheproof hkdf_sha256_test.json, every case")
    func wycheproof() throws {
        let file = try VectorFile.load(
            "wycheproof/testvectors_v1/hkdf_sha256_test.json", as: WycheproofFile<HkdfGroup>.self)
        var count = 0
        for group in file.testGroups {
            for test in group.tests {
                count += 1
                let context = Comment(rawValue: "tcId \(test.tcId): \(test.comment) \(test.flags)")
                switch test.result {
                case .valid, .acceptable:
                    let okm = try HKDF.deriveKey(
                        inputKeyMaterial: test.ikm.secure, salt: test.salt.bytes, info: test.info.bytes,
                        outputCount: test.size)
                    #expect(okm.revealedBytes() == test.okm.bytes, context)
                case .invalid:
                    #expect(
                        test.size > Self.rfcMaximumOutput,
                        "only oversized outputs are expected to be invalid; \(context)")
                    #expect(throws: ShareCryptoError(.invalidLength, ""), context) {
                        try HKDF.deriveKey(
                            inputKeyMaterial: test.ikm.secure, salt: test.salt.bytes, info: test.info.bytes,
                            outputCount: test.size)
                    }
                }
            }
        }
        #expect(count == file.numberOfTests)
        VectorFile.report("wycheproof hkdf_sha256_test.json", cases: count)
    }

    @Test("RFC 5869 A.1–A.3: PRK through extract, OKM through expand and deriveKey")
    func rfc5869() throws {
        let file = try VectorFile.load("rfc-kats/rfc5869_hkdf_sha256.json", as: RFC5869File.self)
        for test in file.cases {
            let context = Comment(rawValue: "RFC 5869 case (Wycheproof tcId \(test.wycheproof_tcId))")
            let prk = HKDF.extract(inputKeyMaterial: test.ikm.secure, salt: test.salt.bytes)
            #expect(prk.revealedBytes() == test.prk_computed.bytes, context)
            let expanded = try HKDF.expand(pseudoRandomKey: prk, info: test.info.bytes, outputCount: test.L)
            #expect(expanded.revealedBytes() == test.okm.bytes, context)
            let derived = try HKDF.deriveKey(
                inputKeyMaterial: test.ikm.secure, salt: test.salt.bytes, info: test.info.bytes, outputCount: test.L)
            #expect(derived.revealedBytes() == test.okm.bytes, context)
        }
        VectorFile.report("rfc-kats rfc5869_hkdf_sha256.json", cases: file.cases.count)
    }
}
