#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSecp256k1

// SECP256K1_EC_UNCOMPRESSED: SECP256K1_FLAGS_TYPE_COMPRESSION alone.
private let uncompressedFlag: UInt32 = 1 << 1

extension ECDSASignature {
    private static var context: OpaquePointer { Point.context }

    /// Low-s normalisation by libsecp256k1; `flipped` when `s` was high and became `n − s`.
    static func normalisedS(r: [UInt8], s: [UInt8]) throws -> (s: [UInt8], flipped: Bool) {
        guard r.contains(where: { $0 != 0 }), s.contains(where: { $0 != 0 }) else {
            throw ShareCryptoError(.invalidScalar, "ECDSA r and s must not be zero")
        }
        var signature = secp256k1_ecdsa_signature()
        guard secp256k1_ecdsa_signature_parse_compact(context, &signature, r + s) == 1 else {
            throw ShareCryptoError(.invalidScalar, "ECDSA r and s must be below the group order n")
        }
        var normalised = secp256k1_ecdsa_signature()
        let flipped = secp256k1_ecdsa_signature_normalize(context, &normalised, &signature) == 1
        var compact = [UInt8](repeating: 0, count: 64)
        _ = secp256k1_ecdsa_signature_serialize_compact(context, &compact, &normalised)
        return (Array(compact[32..<64]), flipped)
    }

    /// The strict DER form (`SEQUENCE { INTEGER r, INTEGER s }`, minimal integers), 8 to 72 bytes.
    public var der: [UInt8] {
        var signature = parsed()
        var out = [UInt8](repeating: 0, count: 72)
        var count = out.count
        _ = secp256k1_ecdsa_signature_serialize_der(Self.context, &out, &count, &signature)
        return Array(out[0..<count])
    }

    /// A signature from its DER form, with the recovery id that goes with it.
    ///
    /// Only strict DER is taken: the bytes must be exactly what ``der`` would write for the values
    /// they hold (no padding, no long lengths, nothing after the sequence). A high `s` is normalised.
    /// - Parameters:
    ///   - der: The DER bytes.
    ///   - recoveryId: 0 or 1.
    /// - Throws: ``ShareCryptoError/Code/invalidEncoding`` when the bytes are not strict DER; as
    ///   ``init(r:s:recoveryId:)`` for out-of-range values.
    public init(der: some ContiguousBytes, recoveryId: UInt8) throws {
        let bytes = der.withUnsafeBytes { Array($0) }
        var signature = secp256k1_ecdsa_signature()
        guard bytes.count <= 72, secp256k1_ecdsa_signature_parse_der(Self.context, &signature, bytes, bytes.count) == 1
        else { throw ShareCryptoError(.invalidEncoding, "not a DER ECDSA signature with values below n") }
        var compact = [UInt8](repeating: 0, count: 64)
        _ = secp256k1_ecdsa_signature_serialize_compact(Self.context, &compact, &signature)
        var reencoded = [UInt8](repeating: 0, count: 72)
        var count = reencoded.count
        _ = secp256k1_ecdsa_signature_serialize_der(Self.context, &reencoded, &count, &signature)
        guard Array(reencoded[0..<count]) == bytes else {
            throw ShareCryptoError(.invalidEncoding, "the DER signature is not in its strict, minimal form")
        }
        try self.init(compact: compact, recoveryId: recoveryId)
    }

    /// Verifies the signature over a 32-byte digest by libsecp256k1's `secp256k1_ecdsa_verify`
    /// (which refuses a high `s`; values of this type never have one).
    /// - Parameters:
    ///   - digest: The 32-byte message digest (signed as is, never hashed again).
    ///   - publicKey: The secp256k1 public key.
    /// - Returns: Whether the signature is valid.
    public func isValid(digest: some ContiguousBytes, publicKey: Point) -> Bool {
        let digest = digest.withUnsafeBytes { Array($0) }
        guard digest.count == 32, publicKey.curve == .secp256k1 else { return false }
        var signature = parsed()
        var key = Point.key(of: publicKey)
        return secp256k1_ecdsa_verify(Self.context, &signature, digest, &key) == 1
    }

    /// The public key that public-key recovery (Ethereum's `ecrecover`) finds from `(digest, r, s, v)`.
    /// - Parameter digest: The 32-byte digest that was signed.
    /// - Returns: The recovered key.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` for a digest that is not 32 bytes;
    ///   ``ShareCryptoError/Code/invalidPoint`` when no key recovers (r is no point's x coordinate).
    public func recoverPublicKey(digest: some ContiguousBytes) throws -> Point {
        let digest = digest.withUnsafeBytes { Array($0) }
        guard digest.count == 32 else {
            throw ShareCryptoError(.invalidLength, "an ECDSA digest is 32 bytes, got \(digest.count)")
        }
        var signature = secp256k1_ecdsa_recoverable_signature()
        guard
            secp256k1_ecdsa_recoverable_signature_parse_compact(Self.context, &signature, compact, Int32(recoveryId))
                == 1
        else { throw ShareCryptoError(.invalidScalar, "libsecp256k1 refused r‖s as a recoverable signature") }
        var key = secp256k1_pubkey()
        guard secp256k1_ecdsa_recover(Self.context, &key, &signature, digest) == 1 else {
            throw ShareCryptoError(.invalidPoint, "no public key recovers from this signature and digest")
        }
        return Point.wrap(key)
    }

    private func parsed() -> secp256k1_ecdsa_signature {
        var signature = secp256k1_ecdsa_signature()
        // Every value of this type holds r and s in range, so parsing cannot fail.
        _ = secp256k1_ecdsa_signature_parse_compact(Self.context, &signature, compact)
        return signature
    }
}

extension Point {
    /// The 64-byte `X || Y` of a secp256k1 point (SEC1 uncompressed without its `04` prefix), as
    /// Ethereum hashes it for an address.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 point.
    public func secp256k1Coordinates() throws -> [UInt8] {
        guard curve == .secp256k1 else {
            throw ShareCryptoError(.invalidParameters, "only a secp256k1 point has an uncompressed form")
        }
        var key = Point.key(of: self)
        var out = [UInt8](repeating: 0, count: 65)
        var count = out.count
        _ = secp256k1_ec_pubkey_serialize(Point.context, &out, &count, &key, uncompressedFlag)
        return Array(out[1..<65])
    }
}
