public import ShareCrypto

/// The three signature modes of docs/formats.md §11.
public enum SigningMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// secp256k1 only: the BIP FROST-signing draft; a 64-byte BIP-340 signature under Y's x-only key.
    case bip340
    /// RFC 9591: FROST(Ed25519, SHA-512), a 64-byte RFC 8032 signature; or FROST(secp256k1, SHA-256),
    /// 65 bytes `R (compressed) || z`.
    case rfc9591

    /// The mode a curve signs in when none is named: `bip340` on secp256k1, `rfc9591` on ed25519.
    public static func `default`(for curve: Curve) -> SigningMode {
        curve == .secp256k1 ? .bip340 : .rfc9591
    }

    /// Checks that the mode exists on a curve.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for `bip340` on ed25519.
    public func check(on curve: Curve) throws(ShareRecoveryError) {
        guard self == .rfc9591 || curve == .secp256k1 else {
            throw ShareRecoveryError(
                .invalidParameters, "mode bip340 signs on secp256k1 only; ed25519 signs in mode rfc9591")
        }
    }

    /// The signature's size in bytes on a curve.
    public func signatureCount(on curve: Curve) -> Int {
        self == .rfc9591 && curve == .secp256k1 ? 65 : 64
    }

    public var description: String { rawValue }
}

/// Single-signer verification of a §11 signature by a verifier that knows nothing of FROST:
/// libsodium's `crypto_sign_verify_detached` (ed25519), libsecp256k1's `secp256k1_schnorrsig_verify`
/// (bip340), RFC 9591 §5.4 `verify_signature` (secp256k1 rfc9591).
public enum SignatureVerifier {
    /// Whether `signature` is a valid signature of `message` under `publicKey` in `mode`.
    /// - Parameters:
    ///   - signature: The signature bytes.
    ///   - message: The message.
    ///   - publicKey: Y, the wallet public key (§1 encoding when serialised).
    ///   - mode: The mode; `bip340` on ed25519 is never valid.
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: Point, mode: SigningMode) -> Bool {
        switch mode {
        case .bip340:
            guard publicKey.curve == .secp256k1 else { return false }
            return FrostBIP340.verify(signature: signature, message: message, xOnlyKey: publicKey.xOnlyRepresentation)
        case .rfc9591:
            return FrostRFC9591.verify(signature: signature, message: message, groupKey: publicKey)
        }
    }
}
