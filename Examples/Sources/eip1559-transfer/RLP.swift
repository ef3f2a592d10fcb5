// Ethereum's Recursive Length Prefix encoding (Ethereum Yellow Paper, appendix B), as much of it as a
// transaction needs. It belongs to this example: the engine signs a 32-byte digest and knows nothing
// of transactions.

/// One RLP item: a byte string or a list of items.
enum RLP {
    case bytes([UInt8])
    case list([RLP])

    /// An unsigned integer as RLP writes it: big-endian without leading zeros, so 0 is the empty string.
    static func integer(_ value: UInt64) -> RLP {
        .bytes(minimal(withUnsafeBytes(of: value.bigEndian, Array.init)))
    }

    /// A 32-byte big-endian value (a signature's r or s) as an integer, leading zeros dropped.
    static func integer(bigEndian bytes: [UInt8]) -> RLP { .bytes(minimal(bytes)) }

    var encoded: [UInt8] {
        switch self {
        case .bytes(let bytes):
            // A single byte below 0x80 is its own encoding.
            if bytes.count == 1, bytes[0] < 0x80 { return bytes }
            return RLP.header(length: bytes.count, shortOffset: 0x80) + bytes
        case .list(let items):
            let payload = items.flatMap(\.encoded)
            return RLP.header(length: payload.count, shortOffset: 0xC0) + payload
        }
    }

    /// The prefix of a string (0x80) or list (0xC0): offset + length up to 55 bytes, else offset + 55 +
    /// the length's own byte count, then the length big-endian.
    private static func header(length: Int, shortOffset: UInt8) -> [UInt8] {
        if length <= 55 { return [shortOffset + UInt8(length)] }
        let lengthBytes = minimal(withUnsafeBytes(of: UInt64(length).bigEndian, Array.init))
        return [shortOffset + 55 + UInt8(lengthBytes.count)] + lengthBytes
    }

    private static func minimal(_ bigEndian: [UInt8]) -> [UInt8] { Array(bigEndian.drop { $0 == 0 }) }
}
