#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// XChaCha20-Poly1305-IETF (libsodium `crypto_aead_xchacha20poly1305_ietf_*`).
public enum XChaCha20Poly1305 {
    /// Key size in bytes.
    public static let keyCount = 32
    /// Nonce size in bytes.
    public static let nonceCount = 24
    /// Tag size in bytes, appended to the ciphertext.
    public static let tagCount = 16

    /// Encrypts and authenticates.
    /// - Parameters:
    ///   - plaintext: The secret to encrypt.
    ///   - key: A 32-byte key.
    ///   - nonce: A 24-byte nonce, never reused with the same key.
    ///   - aad: Authenticated, unencrypted data.
    /// - Returns: ciphertext || 16-byte tag.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` for a wrong key or nonce size.
    public static func seal(
        _ plaintext: SecureBytes, key: SecureBytes, nonce: some ContiguousBytes, aad: some ContiguousBytes
    ) throws -> [UInt8] {
        try checkSizes(key: key, nonce: nonce)
        Sodium.ensureInitialised()
        let outCount = plaintext.count + tagCount
        var produced: UInt64 = 0
        let out = [UInt8](unsafeUninitializedCapacity: outCount) { out, initialized in
            plaintext.withUnsafeBytes { m in
                key.withUnsafeBytes { k in
                    nonce.withUnsafeBytes { n in
                        aad.withUnsafeBytes { a in
                            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                                out.baseAddress!, &produced,
                                m.u8, UInt64(m.count),
                                a.u8, UInt64(a.count),
                                nil, n.u8,
                                k.u8)
                        }
                    }
                }
            }
            initialized = outCount
        }
        return out
    }

    /// Verifies and decrypts.
    /// - Parameters:
    ///   - ciphertext: ciphertext || tag.
    ///   - key: A 32-byte key.
    ///   - nonce: The 24-byte nonce used to seal.
    ///   - aad: The same authenticated data.
    /// - Returns: The plaintext, as a secret.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` for wrong sizes (including a ciphertext shorter
    ///   than the tag), ``ShareCryptoError/Code/authenticationFailed`` when the tag does not verify.
    public static func open(
        _ ciphertext: some ContiguousBytes, key: SecureBytes, nonce: some ContiguousBytes, aad: some ContiguousBytes
    ) throws -> SecureBytes {
        try checkSizes(key: key, nonce: nonce)
        Sodium.ensureInitialised()
        return try ciphertext.withUnsafeBytes { c in
            guard c.count >= tagCount else {
                throw ShareCryptoError(.invalidLength, "ciphertext of \(c.count) bytes is shorter than the tag")
            }
            var status: Int32 = -1
            let plain = SecureBytes(count: c.count - tagCount) { out in
                var produced: UInt64 = 0
                key.withUnsafeBytes { k in
                    nonce.withUnsafeBytes { n in
                        aad.withUnsafeBytes { a in
                            status = crypto_aead_xchacha20poly1305_ietf_decrypt(
                                out.u8, &produced, nil,
                                c.u8, UInt64(c.count),
                                a.u8, UInt64(a.count),
                                n.u8,
                                k.u8)
                        }
                    }
                }
            }
            guard status == 0 else { throw ShareCryptoError(.authenticationFailed, "authentication failed") }
            return plain
        }
    }

    private static func checkSizes(key: SecureBytes, nonce: some ContiguousBytes) throws {
        guard key.count == keyCount else {
            throw ShareCryptoError(.invalidLength, "AEAD key must be \(keyCount) bytes, got \(key.count)")
        }
        let nonceSize = nonce.withUnsafeBytes { $0.count }
        guard nonceSize == nonceCount else {
            throw ShareCryptoError(.invalidLength, "AEAD nonce must be \(nonceCount) bytes, got \(nonceSize)")
        }
    }
}
