#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import Foundation
public import ShareCrypto

/// The secret that unlocks a cipherText: a password or recovery code (Argon2id methods), or 32
/// bytes of key material (HKDF methods: passkey PRF output, cloud key).
public struct BackupSecret: Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        /// UTF-8 of the NFC form.
        case text(SecureBytes)
        case keyMaterial(SecureBytes)
    }

    let storage: Storage

    /// A password or recovery code. It is normalised to Unicode NFC, as §5 requires, so the same
    /// password typed on two keyboards derives the same key.
    /// - Parameter text: The secret text.
    public static func text(_ text: String) -> BackupSecret {
        BackupSecret(storage: .text(SecureBytes(copying: Array(text.precomposedStringWithCanonicalMapping.utf8))))
    }

    /// A password or recovery code given as UTF-8 bytes (e.g. read from a file).
    /// - Parameter utf8: The bytes.
    /// - Throws: ``ShareRecoveryError/Code/malformedInput`` when the bytes are not UTF-8.
    public static func text(utf8: SecureBytes) throws(ShareRecoveryError) -> BackupSecret {
        guard let text = utf8.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw ShareRecoveryError(.malformedInput, "the secret is not UTF-8")
        }
        return .text(text)
    }

    /// Key material for an HKDF method. Its length is checked when it is used (§5: exactly 32 bytes).
    /// - Parameter bytes: The key material.
    public static func keyMaterial(_ bytes: SecureBytes) -> BackupSecret {
        BackupSecret(storage: .keyMaterial(bytes))
    }

    public var description: String { "BackupSecret(redacted)" }
}

extension BackupSecret {
    /// Derives the 32-byte cipherText key for an envelope's parameters.
    package func deriveKey(method: BackupMethod, parameters: KDFParameters) throws(ShareRecoveryError) -> SecureBytes {
        switch (storage, parameters) {
        case (.text(let password), .argon2id13(let argon, let salt)):
            guard password.count > 0 else { throw ShareRecoveryError(.emptySecret, "the \(method) is empty") }
            return try mappingCryptoErrors { try Argon2id.deriveKey(password: password, salt: salt, parameters: argon) }
        case (.keyMaterial(let ikm), .hkdfSHA256(let salt)):
            guard ikm.count == 32 else {
                throw ShareRecoveryError(.invalidKeyMaterial, "key material must be 32 bytes, got \(ikm.count)")
            }
            let info = Array("share-recovery v1 backup key".utf8) + [0x00, method.rawValue]
            return try mappingCryptoErrors {
                try HKDF.deriveKey(inputKeyMaterial: ikm, salt: salt, info: info, outputCount: 32)
            }
        case (.text, .hkdfSHA256):
            throw ShareRecoveryError(
                .invalidKeyMaterial, "the \(method) method takes 32 bytes of key material, not text")
        case (.keyMaterial, .argon2id13):
            throw ShareRecoveryError(.invalidKeyMaterial, "the \(method) method takes a text secret, not key material")
        }
    }
}
