#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// An X25519 key pair for sealed boxes (the custodian's sealing key).
public struct SealingKeyPair: Sendable {
    /// The 32-byte X25519 public key.
    public let publicKey: [UInt8]
    /// The 32-byte X25519 secret key.
    public let secretKey: SecureBytes

    /// Generates a key pair.
    /// - Parameter random: The random source (the system CSPRNG in production).
    public init(using random: some RandomSource = SystemRandom()) {
        let seed = random.secureBytes(count: Int(crypto_box_SEEDBYTES))
        self = SealingKeyPair(seed: seed)
    }

    private init(seed: SecureBytes) {
        Sodium.ensureInitialised()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        secretKey = SecureBytes(count: Int(crypto_box_SECRETKEYBYTES)) { sk in
            seed.withUnsafeBytes { s in
                _ = crypto_box_seed_keypair(&pk, sk.u8, s.u8)
            }
        }
        publicKey = pk
    }

    /// Restores a key pair from its secret key.
    /// - Parameter secretKey: 32 bytes.
    /// - Throws: ``ShareCryptoError/Code/invalidKey`` for a wrong size or an unusable key.
    public init(secretKey: SecureBytes) throws {
        guard secretKey.count == Int(crypto_box_SECRETKEYBYTES) else {
            throw ShareCryptoError(.invalidKey, "an X25519 secret key is 32 bytes, got \(secretKey.count)")
        }
        Sodium.ensureInitialised()
        var pk = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        let status = secretKey.withUnsafeBytes { crypto_scalarmult_base(&pk, $0.u8) }
        guard status == 0 else { throw ShareCryptoError(.invalidKey, "the X25519 secret key is unusable") }
        self.secretKey = secretKey
        self.publicKey = pk
    }
}

/// Anonymous sealed boxes (`crypto_box_seal`): X25519 + XSalsa20-Poly1305 to a recipient's public key.
public enum SealedBox {
    /// Bytes a sealed box adds to its message.
    public static let overhead = Int(crypto_box_PUBLICKEYBYTES) + Int(crypto_box_MACBYTES)

    /// Seals a secret to a recipient. With the system random source this is exactly `crypto_box_seal`;
    /// an injected source makes the ephemeral key (and so the output) reproducible for vectors.
    /// - Parameters:
    ///   - message: The secret to seal.
    ///   - recipient: The recipient's 32-byte X25519 public key.
    ///   - random: Source of the ephemeral key.
    /// - Returns: ephemeral public key || box.
    /// - Throws: ``ShareCryptoError/Code/invalidKey`` for a bad recipient key.
    public static func seal(
        _ message: SecureBytes, to recipient: [UInt8], using random: some RandomSource = SystemRandom()
    ) throws -> [UInt8] {
        guard recipient.count == Int(crypto_box_PUBLICKEYBYTES) else {
            throw ShareCryptoError(.invalidKey, "an X25519 public key is 32 bytes, got \(recipient.count)")
        }
        Sodium.ensureInitialised()
        // crypto_box_seal's construction with an explicit ephemeral key: nonce = BLAKE2b-192(epk || pk).
        let ephemeral = SealingKeyPair(using: random)
        var nonce = [UInt8](repeating: 0, count: Int(crypto_box_NONCEBYTES))
        let noncePrefix = ephemeral.publicKey + recipient
        _ = crypto_generichash(&nonce, nonce.count, noncePrefix, UInt64(noncePrefix.count), nil, 0)
        var out = ephemeral.publicKey + [UInt8](repeating: 0, count: message.count + Int(crypto_box_MACBYTES))
        let status = out.withUnsafeMutableBufferPointer { o in
            message.withUnsafeBytes { m in
                ephemeral.secretKey.withUnsafeBytes { esk in
                    crypto_box_easy(
                        o.baseAddress! + Int(crypto_box_PUBLICKEYBYTES),
                        m.u8, UInt64(m.count),
                        nonce, recipient, esk.u8)
                }
            }
        }
        guard status == 0 else { throw ShareCryptoError(.invalidKey, "the recipient key is unusable (low order)") }
        return out
    }

    /// Opens a sealed box.
    /// - Parameters:
    ///   - sealed: ephemeral public key || box.
    ///   - keyPair: The recipient's key pair.
    /// - Returns: The message, as a secret.
    /// - Throws: ``ShareCryptoError/Code/unsealFailed`` when the box is too short, tampered, or for another key.
    public static func open(_ sealed: some ContiguousBytes, with keyPair: SealingKeyPair) throws -> SecureBytes {
        Sodium.ensureInitialised()
        return try sealed.withUnsafeBytes { c in
            guard c.count >= overhead else {
                throw ShareCryptoError(.unsealFailed, "a sealed box of \(c.count) bytes is shorter than its overhead")
            }
            var status: Int32 = -1
            let message = SecureBytes(count: c.count - overhead) { out in
                keyPair.secretKey.withUnsafeBytes { sk in
                    status = crypto_box_seal_open(
                        out.u8,
                        c.u8, UInt64(c.count),
                        keyPair.publicKey, sk.u8)
                }
            }
            guard status == 0 else {
                throw ShareCryptoError(.unsealFailed, "the sealed box does not open with this key")
            }
            return message
        }
    }
}

/// X25519 Diffie–Hellman (`crypto_scalarmult`), for checks against external vectors.
public enum X25519 {
    /// Computes the shared secret.
    /// - Parameters:
    ///   - secretKey: 32-byte scalar.
    ///   - publicKey: 32-byte u-coordinate.
    /// - Returns: The shared secret.
    /// - Throws: ``ShareCryptoError/Code/invalidKey`` for wrong sizes or a low-order public key (all-zero output).
    public static func sharedSecret(secretKey: SecureBytes, publicKey: some ContiguousBytes) throws -> SecureBytes {
        let pkCount = publicKey.withUnsafeBytes { $0.count }
        guard secretKey.count == 32, pkCount == 32 else {
            throw ShareCryptoError(.invalidKey, "X25519 keys are 32 bytes")
        }
        Sodium.ensureInitialised()
        var status: Int32 = -1
        let shared = SecureBytes(count: 32) { out in
            secretKey.withUnsafeBytes { sk in
                publicKey.withUnsafeBytes { pk in
                    status = crypto_scalarmult(
                        out.u8, sk.u8,
                        pk.u8)
                }
            }
        }
        guard status == 0 else { throw ShareCryptoError(.invalidKey, "low-order X25519 public key") }
        return shared
    }
}
