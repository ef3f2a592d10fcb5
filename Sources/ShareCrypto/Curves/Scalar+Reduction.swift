import CSodium

// Hash outputs become scalars by reduction mod the group order: RFC 9591's hash_to_field and
// SHA-512 mod l, and BIP-340's challenge, all read a wide integer and reduce it.
extension Scalar {
    /// Up to 64 bytes read as one big-endian integer, reduced mod the order (RFC 9380 OS2IP, BIP-340 int()).
    /// - Parameters:
    ///   - bytes: At most 64 bytes, possibly secret.
    ///   - curve: The curve whose order reduces.
    init(reducingBigEndian bytes: UnsafeRawBufferPointer, curve: Curve) {
        precondition(bytes.count <= 64, "at most 512 bits reduce")
        self = withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { wide in
            defer { sodium_memzero(wide.baseAddress, wide.count) }
            wide.initializeMemory(as: UInt8.self, repeating: 0)
            UnsafeMutableRawBufferPointer(rebasing: wide[(64 - bytes.count)...]).copyMemory(from: bytes)
            let high = ScalarField.Limbs(bigEndian: UnsafeRawBufferPointer(rebasing: wide[0..<32]))
            let low = ScalarField.Limbs(bigEndian: UnsafeRawBufferPointer(rebasing: wide[32..<64]))
            return Scalar(montgomery: curve.field.reduceWide(low: low, high: high), curve: curve)
        }
    }

    /// Exactly 64 bytes read as one little-endian integer, reduced mod the order (RFC 8032 / RFC 9591 ed25519).
    /// - Parameters:
    ///   - bytes: 64 bytes, possibly secret.
    ///   - curve: The curve whose order reduces.
    init(reducingLittleEndian64 bytes: UnsafeRawBufferPointer, curve: Curve) {
        precondition(bytes.count == 64, "a little-endian wide reduction reads 64 bytes")
        let low = ScalarField.Limbs(littleEndian: UnsafeRawBufferPointer(rebasing: bytes[0..<32]))
        let high = ScalarField.Limbs(littleEndian: UnsafeRawBufferPointer(rebasing: bytes[32..<64]))
        self.init(montgomery: curve.field.reduceWide(low: low, high: high), curve: curve)
    }

    /// A secret buffer of up to 64 bytes, big-endian, reduced mod the order.
    init(reducingBigEndian secret: SecureBytes, curve: Curve) {
        self = secret.withUnsafeBytes { Scalar(reducingBigEndian: $0, curve: curve) }
    }

    /// A 64-byte secret buffer, little-endian, reduced mod the order.
    init(reducingLittleEndian64 secret: SecureBytes, curve: Curve) {
        self = secret.withUnsafeBytes { Scalar(reducingLittleEndian64: $0, curve: curve) }
    }
}
