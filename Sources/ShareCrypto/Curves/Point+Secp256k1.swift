import CSecp256k1

/// One randomized libsecp256k1 context for the process. Its functions take it as `const`,
/// so sharing it across threads is safe once randomisation is done.
final class Secp256k1Context: @unchecked Sendable {
    let pointer: OpaquePointer

    static let shared = Secp256k1Context()

    private init() {
        // SECP256K1_CONTEXT_NONE == 1; the flag macros are not imported into Swift.
        guard let context = secp256k1_context_create(1) else { fatalError("secp256k1_context_create failed") }
        // Randomisation blinds k·G against side channels.
        let seed = SystemRandom().secureBytes(count: 32)
        _ = seed.withUnsafeBytes { secp256k1_context_randomize(context, $0.u8) }
        pointer = context
    }
}

// SECP256K1_EC_COMPRESSED: SECP256K1_FLAGS_TYPE_COMPRESSION | SECP256K1_FLAGS_BIT_COMPRESSION.
private let compressedFlag: UInt32 = (1 << 1) | (1 << 8)

extension Point {
    static var context: OpaquePointer { Secp256k1Context.shared.pointer }

    static func parseSecp256k1(_ bytes: [UInt8]) throws -> Point {
        // Only compressed encodings: uncompressed (0x04) and hybrid (0x06/0x07) are rejected by length or prefix.
        guard bytes[0] == 0x02 || bytes[0] == 0x03 else {
            throw ShareCryptoError(.invalidPoint, "secp256k1 points must be compressed (0x02/0x03 prefix)")
        }
        var key = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_parse(context, &key, bytes, bytes.count) == 1 else {
            throw ShareCryptoError(.invalidPoint, "not a point on secp256k1")
        }
        return Point(curve: .secp256k1, rawRepresentation: bytes, parsed: storage(of: key))
    }

    static func secp256k1Generator(times k: Scalar) throws -> Point {
        var key = secp256k1_pubkey()
        let ok = k.rawRepresentation.withUnsafeBytes { secp256k1_ec_pubkey_create(context, &key, $0.u8) }
        guard ok == 1 else { throw ShareCryptoError(.invalidScalar, "k·G rejected the scalar") }
        return wrap(key)
    }

    func secp256k1Multiplied(by k: Scalar) throws -> Point {
        var key = Point.key(of: self)
        let ok = k.rawRepresentation.withUnsafeBytes { secp256k1_ec_pubkey_tweak_mul(Point.context, &key, $0.u8) }
        guard ok == 1 else { throw ShareCryptoError(.invalidScalar, "k·P rejected the scalar") }
        return Point.wrap(key)
    }

    static func secp256k1Sum(_ points: [Point]) throws -> Point {
        guard let sum = secp256k1SumAllowingIdentity(points) else {
            throw ShareCryptoError(.invalidPoint, "the sum is the identity")
        }
        return sum
    }

    /// The sum of one or more points; `nil` when it is the identity (the only way combine fails on valid keys).
    static func secp256k1SumAllowingIdentity(_ points: [Point]) -> Point? {
        // One combine call normalises once for the whole sum.
        let keys = UnsafeMutableBufferPointer<secp256k1_pubkey>.allocate(capacity: points.count)
        defer { keys.deallocate() }
        for (slot, point) in points.enumerated() { keys[slot] = key(of: point) }
        var pointers: [UnsafePointer<secp256k1_pubkey>?] = (0..<points.count).map {
            UnsafePointer(keys.baseAddress! + $0)
        }
        var sum = secp256k1_pubkey()
        guard secp256k1_ec_pubkey_combine(context, &sum, &pointers, pointers.count) == 1 else { return nil }
        return wrap(sum)
    }

    func secp256k1Negated() -> Point {
        var key = Point.key(of: self)
        // Negation of a valid key cannot fail.
        _ = secp256k1_ec_pubkey_negate(Point.context, &key)
        return Point.wrap(key)
    }

    /// BIP-340 verification by libsecp256k1 (`secp256k1_schnorrsig_verify`), independent of this module's FROST code.
    static func schnorrVerify(signature: [UInt8], message: [UInt8], xOnlyKey: [UInt8]) -> Bool {
        guard signature.count == 64, xOnlyKey.count == 32 else { return false }
        var key = secp256k1_xonly_pubkey()
        guard secp256k1_xonly_pubkey_parse(context, &key, xOnlyKey) == 1 else { return false }
        return message.withUnsafeBytes { m in secp256k1_schnorrsig_verify(context, signature, m.u8, m.count, &key) == 1
        }
    }

    static func key(of point: Point) -> secp256k1_pubkey {
        var key = secp256k1_pubkey()
        withUnsafeMutableBytes(of: &key) { $0.copyBytes(from: point.parsed) }
        return key
    }

    private static func storage(of key: secp256k1_pubkey) -> [UInt8] {
        withUnsafeBytes(of: key) { Array($0) }
    }

    static func wrap(_ key: secp256k1_pubkey) -> Point {
        var key = key
        var out = [UInt8](repeating: 0, count: 33)
        var count = out.count
        _ = secp256k1_ec_pubkey_serialize(context, &out, &count, &key, compressedFlag)
        return Point(curve: .secp256k1, rawRepresentation: out, parsed: storage(of: key))
    }
}
