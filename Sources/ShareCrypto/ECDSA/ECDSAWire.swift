/// Reading and writing the fixed layouts of the ECDSA messages and stored values (docs/ecdsa.md).
/// A reader refuses short input, trailing bytes and anything that does not parse, with one error.
struct ECDSAWire {
    private let bytes: [UInt8]
    private var offset = 0
    private let what: String

    init(_ bytes: [UInt8], what: String) {
        self.bytes = bytes
        self.what = what
    }

    static func uint32(_ value: Int) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    /// The parts one after another, in one allocation: a chain of `+` copies the long τ or matrix
    /// once per part.
    static func joined(_ parts: [UInt8]...) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for part in parts { out.append(contentsOf: part) }
        return out
    }

    private func malformed(_ detail: String) -> ShareCryptoError {
        ShareCryptoError(.invalidEncoding, "\(what): \(detail)")
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw malformed("too short") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func byte() throws -> UInt8 { try take(1)[0] }

    mutating func uint32() throws -> Int {
        try take(4).reduce(0) { $0 << 8 | Int($1) }
    }

    mutating func point() throws -> Point {
        let raw = try take(33)
        do { return try Point(rawRepresentation: raw, curve: .secp256k1) } catch {
            throw malformed("not a secp256k1 point")
        }
    }

    mutating func scalar() throws -> Scalar {
        let raw = try take(32)
        do { return try Scalar(rawRepresentation: raw, curve: .secp256k1) } catch {
            throw malformed("a scalar is not below n")
        }
    }

    mutating func secret(_ count: Int) throws -> SecureBytes {
        var raw = try take(count)
        defer { for index in raw.indices { raw[index] = 0 } }
        return SecureBytes(copying: raw)
    }

    func finish() throws {
        guard offset == bytes.count else { throw malformed("\(bytes.count - offset) bytes too many") }
    }
}
