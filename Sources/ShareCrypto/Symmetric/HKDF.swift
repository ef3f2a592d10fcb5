#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// HMAC-SHA256 (libsodium `crypto_auth_hmacsha256_*`), keys of any length.
public enum HMACSHA256 {
    /// Output size in bytes.
    public static let outputCount = 32

    /// Computes HMAC-SHA256.
    /// - Parameters:
    ///   - message: The message.
    ///   - key: The key, any length.
    /// - Returns: The 32-byte tag, as a secret (it is key material inside HKDF).
    public static func authenticate(_ message: some ContiguousBytes, key: SecureBytes) -> SecureBytes {
        Sodium.ensureInitialised()
        return SecureBytes(count: outputCount) { out in
            var state = crypto_auth_hmacsha256_state()
            key.withUnsafeBytes { k in
                _ = crypto_auth_hmacsha256_init(&state, k.u8, k.count)
            }
            message.withUnsafeBytes { m in
                _ = crypto_auth_hmacsha256_update(&state, m.u8, UInt64(m.count))
            }
            _ = crypto_auth_hmacsha256_final(&state, out.u8)
            sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
        }
    }
}

/// HKDF-SHA256 (RFC 5869) over ``HMACSHA256``.
public enum HKDF {
    /// Largest output RFC 5869 allows for SHA-256: 255 blocks of 32 bytes.
    public static let maximumOutputCount = 255 * HMACSHA256.outputCount

    /// Extract-then-expand.
    /// - Parameters:
    ///   - inputKeyMaterial: IKM.
    ///   - salt: The salt; empty means a block of zeros, as RFC 5869 says.
    ///   - info: Context and application info.
    ///   - outputCount: L, 0 through 8160 bytes.
    /// - Returns: The output key material.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` when L exceeds 8160.
    public static func deriveKey(
        inputKeyMaterial: SecureBytes, salt: some ContiguousBytes, info: some ContiguousBytes, outputCount: Int
    ) throws -> SecureBytes {
        let prk = extract(inputKeyMaterial: inputKeyMaterial, salt: salt)
        return try expand(pseudoRandomKey: prk, info: info, outputCount: outputCount)
    }

    /// HKDF-Extract: PRK = HMAC(salt, IKM).
    public static func extract(inputKeyMaterial: SecureBytes, salt: some ContiguousBytes) -> SecureBytes {
        let saltKey = salt.withUnsafeBytes { s in
            s.isEmpty ? SecureBytes(zeros: HMACSHA256.outputCount) : SecureBytes(copying: s)
        }
        return inputKeyMaterial.withUnsafeBytes { ikm in HMACSHA256.authenticate(ikm, key: saltKey) }
    }

    /// HKDF-Expand: T(i) = HMAC(PRK, T(i-1) || info || i).
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` when L exceeds 8160.
    public static func expand(
        pseudoRandomKey: SecureBytes, info: some ContiguousBytes, outputCount: Int
    ) throws -> SecureBytes {
        guard outputCount >= 0, outputCount <= maximumOutputCount else {
            throw ShareCryptoError(.invalidLength, "HKDF output of \(outputCount) bytes exceeds 255 blocks")
        }
        let infoBytes = info.withUnsafeBytes { Array($0) }
        return SecureBytes(count: outputCount) { out in
            var previous = SecureBytes(zeros: 0)
            var offset = 0
            var counter: UInt8 = 1
            while offset < outputCount {
                let block = SecureBytes(count: previous.count + infoBytes.count + 1) { input in
                    previous.withUnsafeBytes { p in
                        UnsafeMutableRawBufferPointer(rebasing: input[0..<p.count]).copyMemory(from: p)
                    }
                    infoBytes.withUnsafeBytes { i in
                        UnsafeMutableRawBufferPointer(rebasing: input[previous.count..<previous.count + i.count])
                            .copyMemory(from: i)
                    }
                    input[input.count - 1] = counter
                }
                previous = block.withUnsafeBytes { HMACSHA256.authenticate($0, key: pseudoRandomKey) }
                let take = min(HMACSHA256.outputCount, outputCount - offset)
                previous.withUnsafeBytes { t in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + take])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: t[0..<take]))
                }
                offset += take
                counter &+= 1
            }
        }
    }
}
