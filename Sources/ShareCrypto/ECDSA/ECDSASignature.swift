#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An ordinary secp256k1 ECDSA signature `(r, s)` with its recovery id (docs/formats.md §12).
///
/// Every value of this type has `1 ≤ r, s < n` and a low `s` (`s ≤ n/2`, Bitcoin's standardness
/// rule and Ethereum's EIP-2): a high `s` given to ``init(r:s:recoveryId:)`` is replaced by `n − s`
/// and the recovery id flipped, which is the same signature under the negated nonce.
public struct ECDSASignature: Sendable, Hashable, CustomStringConvertible {
    /// `r`, 32 bytes big-endian: the x coordinate of the nonce point, reduced mod n.
    public let r: [UInt8]
    /// `s`, 32 bytes big-endian, at most n/2.
    public let s: [UInt8]
    /// 0 or 1: the parity of the nonce point's y coordinate (after low-s normalisation). Public-key
    /// recovery from `(digest, r, s)` with this id gives the signing key.
    public let recoveryId: UInt8

    /// A signature from its integers, normalised to low `s`.
    /// - Parameters:
    ///   - r: 32 bytes big-endian, `1 ≤ r < n`.
    ///   - s: 32 bytes big-endian, `1 ≤ s < n`.
    ///   - recoveryId: 0 or 1, for the `s` given (flipped with `s` if it is high).
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` when `r` or `s` is not 32 bytes;
    ///   ``ShareCryptoError/Code/invalidScalar`` when either is zero or at least n;
    ///   ``ShareCryptoError/Code/invalidParameters`` when the recovery id is not 0 or 1.
    public init(r: some ContiguousBytes, s: some ContiguousBytes, recoveryId: UInt8) throws {
        let r = r.withUnsafeBytes { Array($0) }
        let s = s.withUnsafeBytes { Array($0) }
        guard r.count == 32, s.count == 32 else {
            throw ShareCryptoError(.invalidLength, "ECDSA r and s are 32 bytes each, got \(r.count) and \(s.count)")
        }
        guard recoveryId <= 1 else {
            throw ShareCryptoError(.invalidParameters, "an ECDSA recovery id is 0 or 1, got \(recoveryId)")
        }
        let (lowS, flipped) = try Self.normalisedS(r: r, s: s)
        self.r = r
        self.s = lowS
        self.recoveryId = flipped ? recoveryId ^ 1 : recoveryId
    }

    /// A signature from its 64-byte compact form `r || s`.
    /// - Parameters:
    ///   - compact: `r || s`, 64 bytes.
    ///   - recoveryId: 0 or 1.
    /// - Throws: as ``init(r:s:recoveryId:)``.
    public init(compact: some ContiguousBytes, recoveryId: UInt8) throws {
        let bytes = compact.withUnsafeBytes { Array($0) }
        guard bytes.count == 64 else {
            throw ShareCryptoError(.invalidLength, "a compact ECDSA signature is 64 bytes, got \(bytes.count)")
        }
        try self.init(r: bytes[0..<32], s: bytes[32..<64], recoveryId: recoveryId)
    }

    /// A signature from its 65-byte form `r || s || v`, v the recovery id 0 or 1.
    /// - Parameter recoverable: `r || s || v`, 65 bytes.
    /// - Throws: as ``init(r:s:recoveryId:)``.
    public init(recoverable: some ContiguousBytes) throws {
        let bytes = recoverable.withUnsafeBytes { Array($0) }
        guard bytes.count == 65 else {
            throw ShareCryptoError(.invalidLength, "an r‖s‖v ECDSA signature is 65 bytes, got \(bytes.count)")
        }
        try self.init(r: bytes[0..<32], s: bytes[32..<64], recoveryId: bytes[64])
    }

    /// `r || s`, 64 bytes.
    public var compact: [UInt8] { r + s }

    /// `r || s || v`, 65 bytes, v the recovery id 0 or 1 (Ethereum's 27/28 and EIP-155 forms add to it).
    public var recoverable: [UInt8] { r + s + [recoveryId] }

    public var description: String { "ECDSASignature(\(Hex.encode(compact)), v=\(recoveryId))" }
}
