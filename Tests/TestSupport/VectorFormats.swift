public import ShareCrypto

/// Hex bytes in a vector file, decoded by the tests themselves rather than by the code under test.
public struct HexBytes: Decodable, Sendable, Equatable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = HexBytes.decode(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not hex: \(text)"))
        }
        self.bytes = bytes
    }

    /// Either case, even length; `nil` otherwise.
    public static func decode(_ text: String) -> [UInt8]? {
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

    public var count: Int { bytes.count }

    /// The bytes as a secret buffer, for APIs that take key material as ``SecureBytes``.
    public var secure: SecureBytes { SecureBytes(copying: bytes) }

    /// Lowercase hex, for failure messages.
    public var description: String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}

/// Wycheproof's common envelope: `testGroups[].tests[]`, each test with `tcId`, `result`, `flags`.
public struct WycheproofFile<Group: Decodable & Sendable>: Decodable, Sendable {
    public let algorithm: String
    public let numberOfTests: Int
    public let testGroups: [Group]
}

/// Wycheproof's verdict for one test.
public enum WycheproofResult: String, Decodable, Sendable {
    case valid, acceptable, invalid
}
