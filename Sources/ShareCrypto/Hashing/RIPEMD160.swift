#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CLibcrypto

/// RIPEMD-160 by OpenSSL's libcrypto (`EVP_ripemd160`; in OpenSSL 3 it is in the default provider
/// from 3.0.7 on), for BIP-32's key fingerprints.
public enum RIPEMD160 {
    /// Digest size in bytes.
    public static let outputCount = 20

    /// The 20-byte RIPEMD-160 digest of public bytes.
    /// - Parameter data: The bytes.
    /// - Returns: The digest.
    /// - Throws: ``ShareCryptoError/Code/backendFailure`` when this libcrypto offers no RIPEMD-160
    ///   (an OpenSSL 3 before 3.0.7 keeps it in the legacy provider).
    public static func hash(_ data: some ContiguousBytes) throws -> [UInt8] {
        var ok: Int32 = 0
        var written: UInt32 = 0
        let digest = data.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
                ok = EVP_Digest(input.u8, input.count, buffer.baseAddress!, &written, EVP_ripemd160(), nil)
                initialized = outputCount
            }
        }
        guard ok == 1, written == UInt32(outputCount) else {
            throw ShareCryptoError(
                .backendFailure,
                "libcrypto computed no RIPEMD-160 (OpenSSL 3 before 3.0.7 keeps it in the legacy provider)")
        }
        return digest
    }
}

/// Bitcoin's HASH160: RIPEMD-160 of SHA-256 (BIP-32 takes a key's fingerprint from it).
public enum Hash160 {
    /// `RIPEMD160(SHA256(data))`, 20 bytes.
    /// - Parameter data: The bytes (for a BIP-32 fingerprint, the 33-byte compressed key).
    /// - Returns: The digest.
    /// - Throws: As ``RIPEMD160/hash(_:)``.
    public static func hash(_ data: some ContiguousBytes) throws -> [UInt8] {
        try RIPEMD160.hash(SHA256.hash(data))
    }
}
