#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A signer's public nonce commitment for one signature: RFC 9591's (D, E), the BIP draft's
/// pubnonce (R*,1, R*,2). Both points are valid, non-identity points of one curve.
public struct FrostNonceCommitment: Sendable, Hashable {
    /// The hiding nonce commitment D = d·G (BIP draft: R*,1 = k1·G).
    public let hiding: Point
    /// The binding nonce commitment E = e·G (BIP draft: R*,2 = k2·G).
    public let binding: Point

    /// Pairs two commitments.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the two points are on different curves.
    public init(hiding: Point, binding: Point) throws {
        guard hiding.curve == binding.curve else {
            throw ShareCryptoError(.invalidPoint, "the two nonce commitments are on different curves")
        }
        self.hiding = hiding
        self.binding = binding
    }

    /// The curve.
    public var curve: Curve { hiding.curve }

    /// Both encodings concatenated: the BIP draft's 66-byte pubnonce on secp256k1.
    public var rawRepresentation: [UInt8] { hiding.rawRepresentation + binding.rawRepresentation }

    /// Parses two concatenated point encodings (the BIP draft's pubnonce on secp256k1).
    /// - Parameters:
    ///   - rawRepresentation: Twice the curve's point size.
    ///   - curve: The curve.
    ///   - party: The party index that sent it, named in the error.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` naming `party` when either half is not a valid point.
    public init(rawRepresentation: some ContiguousBytes, curve: Curve, party: Int? = nil) throws {
        let bytes = rawRepresentation.withUnsafeBytes { Array($0) }
        let size = curve.pointCount
        guard bytes.count == 2 * size else {
            throw ShareCryptoError(
                .invalidPoint, "a nonce commitment is \(2 * size) bytes, got \(bytes.count)", party: party)
        }
        do {
            try self.init(
                hiding: Point(rawRepresentation: bytes[0..<size], curve: curve),
                binding: Point(rawRepresentation: bytes[size...], curve: curve))
        } catch let error as ShareCryptoError {
            throw ShareCryptoError(error.code, "nonce commitment: \(error.reason)", party: party)
        }
    }
}

/// A signer's secret nonce pair for exactly one signature (RFC 9591 (d, e); the BIP draft's secnonce
/// (k1, k2)), with its public commitment.
///
/// Single use: signing takes the secret pair out, and its buffers are wiped when signing returns.
/// A second signing attempt with the same nonce throws ``ShareCryptoError/Code/nonceReused``
/// (signing twice with one nonce reveals the share). ``discard()`` wipes an unused nonce.
public final class FrostSigningNonce: Sendable, CustomStringConvertible {
    /// The public commitment to publish in round one.
    public let commitment: FrostNonceCommitment
    private let secret: Locked<(hiding: Scalar, binding: Scalar)?>

    /// A nonce from explicit scalars. Real nonces come from the modes' generators
    /// (``FrostRFC9591/generateNonce(share:using:)``, ``FrostBIP340/generateNonce(share:publicShare:groupKey:message:extraInput:using:)``);
    /// this initialiser exists for published vectors, which fix the nonces.
    /// - Parameters:
    ///   - hiding: d (k1), non-zero.
    ///   - binding: e (k2), non-zero, on the same curve.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for a zero scalar or two curves.
    public init(hiding: Scalar, binding: Scalar) throws {
        guard hiding.curve == binding.curve else { throw ShareCryptoError(.invalidScalar, "nonces on two curves") }
        guard !hiding.isZero else { throw ShareCryptoError(.invalidScalar, "the hiding (first) nonce is zero") }
        guard !binding.isZero else { throw ShareCryptoError(.invalidScalar, "the binding (second) nonce is zero") }
        commitment = try FrostNonceCommitment(
            hiding: Point(generatorTimes: hiding), binding: Point(generatorTimes: binding))
        secret = Locked((hiding, binding))
    }

    /// The curve.
    public var curve: Curve { commitment.curve }

    /// Whether the nonce was used or discarded.
    public var isConsumed: Bool { secret.withLock { $0 == nil } }

    /// Wipes the nonce without signing (an aborted session). Signing with it afterwards throws
    /// ``ShareCryptoError/Code/nonceReused``.
    public func discard() { secret.withLock { $0 = nil } }

    /// Reads the unused secret pair without consuming it.
    func secretPair<R>(_ body: (Scalar, Scalar) throws -> R) throws -> R {
        try secret.withLock { value in
            guard let pair = value else {
                throw ShareCryptoError(
                    .nonceReused, "this signing nonce was already used or discarded; start a new round one")
            }
            return try body(pair.hiding, pair.binding)
        }
    }

    /// Takes the secret pair out, once.
    /// - Throws: ``ShareCryptoError/Code/nonceReused`` on every call after the first.
    func take() throws -> (hiding: Scalar, binding: Scalar) {
        try secret.withLock { value in
            guard let pair = value else {
                throw ShareCryptoError(
                    .nonceReused, "this signing nonce was already used or discarded; start a new round one")
            }
            value = nil
            return pair
        }
    }

    public var description: String { "FrostSigningNonce(\(curve), \(isConsumed ? "consumed" : "unused"), redacted)" }
}

extension FrostSigningNonce {
    /// The unused secret pair, `hiding || binding` in the curve's scalar encoding, for a party that
    /// must keep its nonce between two requests (the reference server seals these bytes at rest).
    ///
    /// Whoever stores the bytes takes over single use: restoring them twice would let the nonce sign
    /// twice, which reveals the share. The reference server consumes its copy by compare-and-swap in
    /// the same transaction that releases the signature share.
    /// - Throws: ``ShareCryptoError/Code/nonceReused`` for a used or discarded nonce.
    public func serializedSecret() throws -> SecureBytes {
        try secretPair { hiding, binding in
            SecureBytes.concatenating([hiding.rawRepresentation, binding.rawRepresentation])
        }
    }

    /// Restores a nonce from ``serializedSecret()``.
    /// - Parameters:
    ///   - serializedSecret: 64 bytes.
    ///   - curve: The curve.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` or the scalar codes for bytes of another shape.
    public convenience init(serializedSecret: SecureBytes, curve: Curve) throws {
        guard serializedSecret.count == 2 * Curve.scalarCount else {
            throw ShareCryptoError(.invalidLength, "a serialised nonce is \(2 * Curve.scalarCount) bytes")
        }
        try self.init(
            hiding: Scalar(secure: serializedSecret.slice(0..<Curve.scalarCount), curve: curve),
            binding: Scalar(secure: serializedSecret.slice(Curve.scalarCount..<(2 * Curve.scalarCount)), curve: curve))
    }
}
