import Foundation
import ShareCrypto
import Testing

/// The one loader for external vectors under `Vectors/<source>/` (copied unmodified from `shared/vectors`).
enum VectorFile {
    /// Decodes one vector file.
    /// - Parameters:
    ///   - relativePath: The path below `Vectors/`, e.g. `wycheproof/testvectors_v1/x25519_test.json`.
    ///   - type: The file's own `Decodable` shape.
    /// - Returns: The decoded file.
    static func load<T: Decodable>(_ relativePath: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: url(relativePath)))
    }

    /// A non-JSON companion file of a source (e.g. a README table the vectors refer to), as UTF-8 text.
    /// - Parameter relativePath: The path below `Vectors/`.
    static func text(_ relativePath: String) throws -> String {
        try String(decoding: Data(contentsOf: url(relativePath)), as: UTF8.self)
    }

    private static func url(_ relativePath: String) throws -> URL {
        let root = try #require(
            Bundle.module.url(forResource: "Vectors", withExtension: nil), "the Vectors resource folder is missing")
        return root.appendingPathComponent(relativePath)
    }

    /// Prints how many cases a test ran and fails the test when it ran none.
    static func report(_ label: String, cases: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        print("\(label): \(cases) cases")
        #expect(cases > 0, "\(label) ran no cases", sourceLocation: sourceLocation)
    }
}

/// Hex bytes in a vector file, decoded by the tests themselves rather than by the code under test.
struct HexBytes: Decodable, Sendable, Equatable, CustomStringConvertible {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = HexBytes.decode(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not hex: \(text)"))
        }
        self.bytes = bytes
    }

    /// Either case, even length; `nil` otherwise.
    static func decode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[i]), let low = nibble(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        return out
    }

    var count: Int { bytes.count }

    /// The bytes as a secret buffer, for APIs that take key material as ``SecureBytes``.
    var secure: SecureBytes { SecureBytes(copying: bytes) }

    /// Lowercase hex, for failure messages.
    var description: String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}

/// Wycheproof's common envelope: `testGroups[].tests[]`, each test with `tcId`, `result`, `flags`.
struct WycheproofFile<Group: Decodable & Sendable>: Decodable, Sendable {
    let algorithm: String
    let numberOfTests: Int
    let testGroups: [Group]
}

/// Wycheproof's verdict for one test.
enum WycheproofResult: String, Decodable, Sendable {
    case valid, acceptable, invalid
}
