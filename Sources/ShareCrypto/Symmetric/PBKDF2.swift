#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CLibcrypto

/// PBKDF2-HMAC-SHA256 through OpenSSL's `PKCS5_PBKDF2_HMAC` (used by SLIP-39's Feistel rounds).
public enum PBKDF2 {
    /// Derives `outputCount` bytes.
    /// - Parameters:
    ///   - password: The password bytes.
    ///   - salt: The salt.
    ///   - iterations: The iteration count, at least 1.
    ///   - outputCount: The output size in bytes, at least 1.
    /// - Returns: The derived bytes.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for a zero count,
    ///   ``ShareCryptoError/Code/backendFailure`` if OpenSSL fails.
    public static func hmacSHA256(
        password: SecureBytes, salt: some ContiguousBytes, iterations: Int, outputCount: Int
    ) throws -> SecureBytes {
        guard iterations >= 1, iterations <= Int(Int32.max), outputCount >= 1, outputCount <= 1 << 20 else {
            throw ShareCryptoError(.invalidParameters, "PBKDF2 needs iterations ≥ 1 and a sensible output size")
        }
        var ok: Int32 = 0
        let out = SecureBytes(count: outputCount) { out in
            password.withUnsafeBytes { p in
                salt.withUnsafeBytes { s in
                    ok = PKCS5_PBKDF2_HMAC(
                        p.i8, Int32(p.count),
                        s.u8, Int32(s.count),
                        Int32(iterations), EVP_sha256(), Int32(outputCount),
                        out.u8)
                }
            }
        }
        guard ok == 1 else { throw ShareCryptoError(.backendFailure, "PKCS5_PBKDF2_HMAC failed") }
        return out
    }
}
