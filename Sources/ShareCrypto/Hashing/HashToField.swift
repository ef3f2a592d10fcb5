import CSodium

/// RFC 9380 §5.3.1 `expand_message_xmd` with SHA-256, and §5.2 `hash_to_field` for one element of
/// the secp256k1 scalar field, as RFC 9591 §6.5 defines H1, H2, H3 (and frost-core HDKG).
enum HashToField {
    /// `L = ceil((ceil(log2(n)) + k) / 8)` for secp256k1's n and k = 128: 48 bytes.
    static let secp256k1ElementCount = 48

    /// `expand_message_xmd(msg, DST, len)` with SHA-256 (b = 32, s = 64 bytes).
    /// - Parameters:
    ///   - message: The message pieces, concatenated; may hold a secret.
    ///   - domain: DST, at most 255 bytes.
    ///   - count: len_in_bytes, at most 255·32.
    /// - Returns: `count` uniform bytes, secret (the message may have been).
    static func expandMessageXMD(_ message: [HashInput], domain: [UInt8], count: Int) -> SecureBytes {
        precondition(domain.count <= 255 && count > 0 && count <= 255 * 32, "expand_message_xmd bounds")
        let blocks = (count + 31) / 32
        let domainPrime = domain + [UInt8(domain.count)]
        // b_0 = H(Z_pad || msg || l_i_b_str || I2OSP(0, 1) || DST_prime)
        let b0 = SHA2Hasher.hashSecret(
            .sha256,
            [.bytes([UInt8](repeating: 0, count: 64))] + message
                + [.bytes([UInt8(count >> 8), UInt8(count & 0xFF), 0] + domainPrime)])
        var blocksOut: [SecureBytes] = []
        // b_1 = H(b_0 || 1 || DST_prime); b_i = H((b_0 xor b_{i−1}) || i || DST_prime)
        var previous = SHA2Hasher.hashSecret(.sha256, [.secret(b0), .bytes([1] + domainPrime)])
        blocksOut.append(previous)
        if blocks > 1 {
            for i in 2...blocks {
                let mixed = SecureBytes(count: 32) { out in
                    b0.withUnsafeBytes { a in previous.withUnsafeBytes { b in for j in 0..<32 { out[j] = a[j] ^ b[j] } }
                    }
                }
                previous = SHA2Hasher.hashSecret(.sha256, [.secret(mixed), .bytes([UInt8(i)] + domainPrime)])
                blocksOut.append(previous)
            }
        }
        let uniform = SecureBytes.concatenating(blocksOut)
        // A slice inside the buffer's bounds cannot fail.
        return try! uniform.slice(0..<count)
    }

    /// `hash_to_field(msg, 1)` into the secp256k1 scalar field: 48 expanded bytes, big-endian, mod n.
    /// - Parameters:
    ///   - message: The message pieces; may hold a secret.
    ///   - domain: DST.
    static func secp256k1Scalar(_ message: [HashInput], domain: [UInt8]) -> Scalar {
        let uniform = expandMessageXMD(message, domain: domain, count: secp256k1ElementCount)
        return Scalar(reducingBigEndian: uniform, curve: .secp256k1)
    }
}
