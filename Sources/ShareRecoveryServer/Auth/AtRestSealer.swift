import ShareCrypto
import ShareRecovery

/// Encrypts the custodian's secrets at rest (its X25519 secret key, signing shares, session secrets):
/// XChaCha20-Poly1305 under a key derived from the master key, with a fresh random nonce per write and
/// AAD binding the table and row, so a sealed value copied into another row does not open.
struct AtRestSealer: Sendable {
    private let key: SecureBytes
    private let random: any RandomSource

    init(key: SecureBytes, random: any RandomSource = SystemRandom()) {
        self.key = key
        self.random = random
    }

    /// nonce (24) || ciphertext || tag (16).
    func seal(_ plaintext: SecureBytes, table: String, row: [String]) throws(ShareRecoveryError) -> [UInt8] {
        let nonce = random.bytes(count: XChaCha20Poly1305.nonceCount)
        do {
            return nonce
                + (try XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, aad: Self.aad(table: table, row: row)))
        } catch {
            throw ShareRecoveryError(.storageFailure, "sealing a secret for \(table) failed")
        }
    }

    /// Opens a sealed value; any failure is `ShareRecoveryError.Code.storeCorrupted` (wrong master key,
    /// tampering, or a value moved between rows).
    func open(_ sealed: [UInt8], table: String, row: [String]) throws(ShareRecoveryError) -> SecureBytes {
        guard sealed.count >= XChaCha20Poly1305.nonceCount + XChaCha20Poly1305.tagCount else {
            throw ShareRecoveryError(.storeCorrupted, "a sealed value in \(table) is truncated")
        }
        do {
            return try XChaCha20Poly1305.open(
                Array(sealed[XChaCha20Poly1305.nonceCount...]), key: key,
                nonce: Array(sealed[..<XChaCha20Poly1305.nonceCount]),
                aad: Self.aad(table: table, row: row))
        } catch {
            throw ShareRecoveryError(.storeCorrupted, "a sealed value in \(table) does not open under the master key")
        }
    }

    /// Domain label, then each component length-prefixed (u32 big-endian) so no two rows share an AAD.
    static func aad(table: String, row: [String]) -> [UInt8] {
        var out = Array("share-recovery-server at-rest v1".utf8)
        for component in [table] + row {
            let bytes = Array(component.utf8)
            let count = UInt32(bytes.count)
            out += [
                UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF),
            ]
            out += bytes
        }
        return out
    }
}
