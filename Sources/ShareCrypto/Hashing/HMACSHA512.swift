#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// HMAC-SHA512 (RFC 2104 over SHA-512) by libsodium's `crypto_auth_hmacsha512_*`, which takes a key
/// of any length, as BIP-32's child key derivation needs (its key is a 32-byte chain code).
public enum HMACSHA512 {
    /// Tag size in bytes.
    public static let outputCount = 64

    /// The 64-byte HMAC-SHA512 of public data under a public key (BIP-32 public derivation has no
    /// secret input: the chain code and the parent key are in the xpub).
    /// - Parameters:
    ///   - key: The key, any length (a key longer than SHA-512's 128-byte block is hashed first, as RFC 2104 says).
    ///   - message: The message, any length.
    /// - Returns: The tag.
    public static func authenticationCode(key: some ContiguousBytes, message: some ContiguousBytes) -> [UInt8] {
        Sodium.ensureInitialised()
        var state = crypto_auth_hmacsha512_state()
        // The state holds the padded key; it is wiped even though this function's inputs are public.
        defer { withUnsafeMutableBytes(of: &state) { sodium_memzero($0.baseAddress, $0.count) } }
        key.withUnsafeBytes { k in _ = crypto_auth_hmacsha512_init(&state, k.u8, k.count) }
        message.withUnsafeBytes { m in _ = crypto_auth_hmacsha512_update(&state, m.u8, UInt64(m.count)) }
        return [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            _ = crypto_auth_hmacsha512_final(&state, buffer.baseAddress!)
            initialized = outputCount
        }
    }
}
