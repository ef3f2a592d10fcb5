import ShareCrypto
import TestSupport
import Testing

/// `wycheproof/derived/secp256k1_sec1_points.json`: Wycheproof's secp256k1 ECDH public keys as raw SEC1 bytes,
/// with what OpenSSL and libsecp256k1 (coincurve) made of each encoding.
struct Sec1PointsFile: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let src: String
        let tcId: Int
        let comment: String
        let flags: [String]
        let wycheproof_result: WycheproofResult
        let sec1_point: HexBytes
        let `private`: HexBytes
        let shared: HexBytes
        let openssl_accepts_point: Bool
        let coincurve_accepts_point: Bool
    }
    let count: Int
    let cases: [Case]
}

@Suite("secp256k1 SEC1 point vectors")
struct Secp256k1PointVectorTests {
    /// docs/formats.md §1 accepts only compressed encodings; among those, libsecp256k1 says which are on the curve.
    private static func expectedAccept(_ test: Sec1PointsFile.Case) -> Bool {
        let bytes = test.sec1_point.bytes
        return bytes.count == 33 && (bytes[0] == 0x02 || bytes[0] == 0x03) && test.coincurve_accepts_point
    }

    /// The ECDH private key as a 32-byte big-endian scalar (the file carries DER-style integers).
    private static func privateScalar(_ test: Sec1PointsFile.Case) throws -> Scalar? {
        let significant = Array(test.private.bytes.drop { $0 == 0 })
        guard !significant.isEmpty, significant.count <= 32 else { return nil }
        return try Scalar(
            rawRepresentation: [UInt8](repeating: 0, count: 32 - significant.count) + significant, curve: .secp256k1)
    }

    /// When Wycheproof has a shared secret for an accepted point, x(d·P) must equal it.
    private static func checkSharedSecret(_ point: Point, _ test: Sec1PointsFile.Case, _ context: Comment) throws
        -> Bool
    {
        guard test.shared.count == 32, let d = try privateScalar(test) else { return false }
        let product = try point.multiplied(by: d)
        #expect(Array(product.rawRepresentation.dropFirst()) == test.shared.bytes, context)
        return true
    }

    @Test("every encoding: accepted exactly when compressed and on the curve")
    func everyEncoding() throws {
        let file = try VectorFile.load("wycheproof/derived/secp256k1_sec1_points.json", as: Sec1PointsFile.self)
        var accepted = 0
        var sharedChecked = 0
        for test in file.cases {
            let context = Comment(
                rawValue: "\(test.src) tcId \(test.tcId): \(test.comment) \(test.flags) \(test.sec1_point)")
            if Self.expectedAccept(test) {
                accepted += 1
                let point = try Point(rawRepresentation: test.sec1_point.bytes, curve: .secp256k1)
                #expect(point.rawRepresentation == test.sec1_point.bytes, context)
                if try Self.checkSharedSecret(point, test, context) { sharedChecked += 1 }
            } else {
                #expect(throws: ShareCryptoError(.invalidPoint, ""), context) {
                    try Point(rawRepresentation: test.sec1_point.bytes, curve: .secp256k1)
                }
            }
        }
        #expect(file.cases.count == file.count)
        print(
            "secp256k1_sec1_points.json: \(accepted) accepted, \(file.cases.count - accepted) rejected, \(sharedChecked) ECDH x-coordinates checked"
        )
        VectorFile.report("wycheproof derived secp256k1_sec1_points.json", cases: file.cases.count)
    }

    @Test("every uncompressed point libsecp256k1 accepts is accepted in compressed form")
    func compressedFormsOfValidUncompressedPoints() throws {
        let file = try VectorFile.load("wycheproof/derived/secp256k1_sec1_points.json", as: Sec1PointsFile.self)
        var count = 0
        var sharedChecked = 0
        for test in file.cases {
            let bytes = test.sec1_point.bytes
            guard bytes.count == 65, bytes[0] == 0x04, test.coincurve_accepts_point else { continue }
            count += 1
            let context = Comment(rawValue: "\(test.src) tcId \(test.tcId): \(test.comment) \(test.sec1_point)")
            let x = Array(bytes[1...32])
            let yIsOdd = bytes[64] & 1 == 1
            let compressed = [yIsOdd ? 0x03 : 0x02] + x
            let point = try Point(rawRepresentation: compressed, curve: .secp256k1)
            #expect(point.rawRepresentation == compressed, context)
            // The other parity is the negated point: also on the curve, and a different point.
            let negated = try Point(rawRepresentation: [yIsOdd ? 0x02 : 0x03] + x, curve: .secp256k1)
            #expect(negated != point, context)
            if try Self.checkSharedSecret(point, test, context) { sharedChecked += 1 }
        }
        print("secp256k1_sec1_points.json compressed forms: \(sharedChecked) ECDH x-coordinates checked")
        VectorFile.report(
            "wycheproof derived secp256k1_sec1_points.json (compressed forms of valid 0x04 points)", cases: count)
    }
}
