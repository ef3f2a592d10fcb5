import CSodium

/// The ed25519 identity's canonical encoding: y = 1.
private let identityEncoding: [UInt8] = [1] + [UInt8](repeating: 0, count: 31)

extension Point {
    static func parseEd25519(_ bytes: [UInt8]) throws -> Point {
        Sodium.ensureInitialised()
        // Canonical, on the curve, not of small order, in the prime-order subgroup.
        guard crypto_core_ed25519_is_valid_point(bytes) == 1 else {
            throw ShareCryptoError(
                .invalidPoint, "not a canonical, prime-order ed25519 point (identity, small or mixed order, off-curve)")
        }
        return Point(curve: .ed25519, rawRepresentation: bytes, parsed: [])
    }

    static func ed25519Generator(times k: Scalar) throws -> Point {
        Sodium.ensureInitialised()
        var out = [UInt8](repeating: 0, count: 32)
        let status = k.rawRepresentation.withUnsafeBytes { crypto_scalarmult_ed25519_base_noclamp(&out, $0.u8) }
        guard status == 0 else { throw ShareCryptoError(.invalidScalar, "k·G rejected the scalar") }
        return Point(curve: .ed25519, rawRepresentation: out, parsed: [])
    }

    func ed25519Multiplied(by k: Scalar) throws -> Point {
        var out = [UInt8](repeating: 0, count: 32)
        let status = k.rawRepresentation.withUnsafeBytes {
            crypto_scalarmult_ed25519_noclamp(&out, $0.u8, rawRepresentation)
        }
        guard status == 0 else { throw ShareCryptoError(.invalidPoint, "k·P is the identity") }
        return Point(curve: .ed25519, rawRepresentation: out, parsed: [])
    }

    static func ed25519Sum(_ points: [Point]) throws -> Point {
        guard let sum = ed25519SumAllowingIdentity(points) else {
            throw ShareCryptoError(.invalidPoint, "the sum is the identity")
        }
        return sum
    }

    /// −(x, y) = (−x, y): flip the sign bit. Valid points have x ≠ 0 (only the identity and the
    /// excluded order-2 point do not), so the result is canonical and of prime order.
    func ed25519Negated() -> Point {
        var bytes = rawRepresentation
        bytes[31] ^= 0x80
        return Point(curve: .ed25519, rawRepresentation: bytes, parsed: [])
    }

    /// The sum of one or more valid points; `nil` when it is the identity.
    static func ed25519SumAllowingIdentity(_ points: [Point]) -> Point? {
        var sum = points[0].rawRepresentation
        var next = [UInt8](repeating: 0, count: 32)
        for point in points.dropFirst() {
            // Fails only on undecodable input; a running sum of valid points (even the identity) decodes.
            guard crypto_core_ed25519_add(&next, sum, point.rawRepresentation) == 0 else { return nil }
            swap(&sum, &next)
        }
        // A sum of prime-order points stays in the subgroup, so only the identity needs ruling out.
        guard sum != identityEncoding else { return nil }
        return Point(curve: .ed25519, rawRepresentation: sum, parsed: [])
    }
}
