import ShareCrypto
import ShareRecovery

/// Encrypts the custodian's secrets at rest (its X25519 secret key, signing shares, session secrets):
/// XChaCha20-Poly1305 under a key derived from a master key, with a fresh random nonce per write and
/// AAD binding the table and row, so a sealed value copied into another row does not open.
///
/// It holds every master key of the file (docs/server.md, "Rotating the master key"): the first seals,
/// and a value names its key by the key id in its header, so any of them opens it.
struct AtRestSealer: Sendable {
    /// The header's first byte. Values sealed before key ids (``Layout/legacy``) have no header; they
    /// begin with their random nonce, so a legacy value may begin with this byte too: the AEAD decides.
    static let version: UInt8 = 2
    /// version (1) || key id (4).
    static let headerCount = 1 + 4

    /// The keys, the sealing one first; never empty.
    private let keys: [DerivedKeys]
    private let random: any RandomSource

    /// - Parameter keys: The master keys' derived keys, the sealing one first (at least one).
    init(keys: [DerivedKeys], random: any RandomSource = SystemRandom()) {
        precondition(!keys.isEmpty, "an at-rest sealer needs a master key")
        self.keys = keys
        self.random = random
    }

    /// The key id values are sealed under: the first master key's.
    var sealingKeyId: [UInt8] { keys[0].keyId }

    /// version (1) || key id (4) || nonce (24) || ciphertext || tag (16); the header is bound into the AAD.
    func seal(_ plaintext: SecureBytes, table: String, row: [String]) throws(ShareRecoveryError) -> [UInt8] {
        let header = [Self.version] + keys[0].keyId
        let nonce = random.bytes(count: XChaCha20Poly1305.nonceCount)
        do {
            return header + nonce
                + (try XChaCha20Poly1305.seal(
                    plaintext, key: keys[0].atRest, nonce: nonce, aad: Self.aad(table: table, row: row, header: header)))
        } catch {
            throw ShareRecoveryError(.storageFailure, "sealing a secret for \(table) failed")
        }
    }

    /// How a sealed value is laid out, and under which key it opens.
    enum Layout: Sendable, Equatable {
        /// With a header naming the key at this index of the sealer's keys (0: the sealing key).
        case keyed(index: Int)
        /// Without a header (sealed before key ids), opening under the key at this index.
        case legacy(index: Int)
    }

    /// Opens a sealed value; any failure is `ShareRecoveryError.Code.storeCorrupted`: a value sealed
    /// under a master key the file no longer holds (the reason names its key id, never a key), tampering,
    /// or a value moved between rows.
    func open(_ sealed: [UInt8], table: String, row: [String]) throws(ShareRecoveryError) -> SecureBytes {
        try opening(sealed, table: table, row: row).plaintext
    }

    /// Opens a sealed value and tells its layout (what `keys rotate` re-seals: all but `.keyed(index: 0)`).
    /// - Throws: `storeCorrupted`, as ``open(_:table:row:)``.
    func opening(_ sealed: [UInt8], table: String, row: [String]) throws(ShareRecoveryError) -> (
        plaintext: SecureBytes, layout: Layout
    ) {
        let overhead = XChaCha20Poly1305.nonceCount + XChaCha20Poly1305.tagCount
        guard sealed.count >= overhead else {
            throw ShareRecoveryError(.storeCorrupted, "a sealed value in \(table) is truncated")
        }
        let named = Self.keyId(of: sealed)
        if let named, let index = keys.firstIndex(where: { $0.keyId == named }),
            let plaintext = Self.open(
                sealed[Self.headerCount...], key: keys[index].atRest,
                aad: Self.aad(table: table, row: row, header: Array(sealed[..<Self.headerCount])))
        {
            return (plaintext, .keyed(index: index))
        }
        // A legacy value names no key: each one is tried.
        let legacyAAD = Self.aad(table: table, row: row, header: [])
        for (index, key) in keys.enumerated() {
            if let plaintext = Self.open(sealed[...], key: key.atRest, aad: legacyAAD) {
                return (plaintext, .legacy(index: index))
            }
        }
        if let named, !holds(keyId: named) {
            throw ShareRecoveryError(
                .storeCorrupted,
                "a sealed value in \(table) was sealed under master key id \(Hex.encode(named)), which the master key file does not hold: add that key back as a line of the file"
            )
        }
        throw ShareRecoveryError(
            .storeCorrupted,
            "a sealed value in \(table) does not open under the master key (key ids \(keys.map { Hex.encode($0.keyId) }.joined(separator: ", ")))"
        )
    }

    /// The key id a value's header names, or `nil` for a value too short for a header or without its
    /// version byte (a legacy value may still look like it: only opening tells).
    static func keyId(of sealed: [UInt8]) -> [UInt8]? {
        let overhead = XChaCha20Poly1305.nonceCount + XChaCha20Poly1305.tagCount
        guard sealed.count >= headerCount + overhead, sealed[0] == version else { return nil }
        return Array(sealed[1..<headerCount])
    }

    /// Whether one of the master keys has this key id.
    func holds(keyId: [UInt8]) -> Bool { keys.contains { $0.keyId == keyId } }

    /// nonce || ciphertext || tag opened, or `nil` when it does not authenticate.
    private static func open(_ body: ArraySlice<UInt8>, key: SecureBytes, aad: [UInt8]) -> SecureBytes? {
        let nonceEnd = body.startIndex + XChaCha20Poly1305.nonceCount
        return try? XChaCha20Poly1305.open(
            Array(body[nonceEnd...]), key: key, nonce: Array(body[..<nonceEnd]), aad: aad)
    }

    /// Domain label, then each component length-prefixed (u32 big-endian) so no two rows share an AAD,
    /// then the header (empty for a legacy value), so a header cannot be swapped for another.
    static func aad(table: String, row: [String], header: [UInt8]) -> [UInt8] {
        var out = Array("share-recovery-server at-rest v1".utf8)
        for component in [table] + row {
            let bytes = Array(component.utf8)
            let count = UInt32(bytes.count)
            out += [
                UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF),
            ]
            out += bytes
        }
        return out + header
    }
}
