#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What the signers of one FROST signature agree on before round two: the group key, the message,
/// and each signer's round-one commitment keyed by party index (docs/formats.md §11).
public struct FrostSigningPackage: Sendable {
    /// The group public key Y (= A_0 of the signing set).
    public let groupKey: Point
    /// The message to sign.
    public let message: [UInt8]
    /// Party index → that signer's nonce commitment; the keys are the signer set.
    public let commitments: [Int: FrostNonceCommitment]

    /// Checks the package's shape.
    /// - Parameters:
    ///   - groupKey: Y.
    ///   - message: The message, any length.
    ///   - commitments: At least one signer, party indices 1…255, every point on Y's curve.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for no signers, an index out of range,
    ///   or a commitment on another curve (naming that party).
    public init(groupKey: Point, message: [UInt8], commitments: [Int: FrostNonceCommitment]) throws {
        guard !commitments.isEmpty else {
            throw ShareCryptoError(.invalidParameters, "a signing package needs at least one signer")
        }
        for (index, commitment) in commitments {
            guard Shamir.indexRange.contains(index) else {
                throw ShareCryptoError(.invalidParameters, "party index \(index) is outside 1…255", party: index)
            }
            guard commitment.curve == groupKey.curve else {
                throw ShareCryptoError(
                    .invalidParameters, "party \(index)'s commitment is not on \(groupKey.curve)", party: index)
            }
        }
        self.groupKey = groupKey
        self.message = message
        self.commitments = commitments
    }

    /// The curve.
    public var curve: Curve { groupKey.curve }

    /// The signer set, ascending.
    public var signers: [Int] { commitments.keys.sorted() }

    /// The signer's own commitment, checked against the nonce it is about to use.
    func commitment(of index: Int, matching nonce: FrostSigningNonce) throws -> FrostNonceCommitment {
        guard let commitment = commitments[index] else {
            throw ShareCryptoError(.invalidParameters, "party \(index) is not in the signing package", party: index)
        }
        guard commitment == nonce.commitment else {
            throw ShareCryptoError(
                .invalidParameters, "the package carries another commitment for party \(index) than this nonce's",
                party: index)
        }
        return commitment
    }

    /// λ_i over the signer set (docs/formats.md §2).
    func lagrangeCoefficient(of index: Int) throws -> Scalar {
        try Shamir.lagrangeCoefficientAtZero(index: index, indices: signers, curve: curve)
    }
}

/// Signature shares as they travel: 32-byte scalars in the curve's encoding.
public enum FrostSignatureShare {
    /// Parses a signer's signature share.
    /// - Parameters:
    ///   - rawRepresentation: 32 bytes.
    ///   - curve: The curve.
    ///   - party: The sender, named in the error.
    /// - Throws: ``ShareCryptoError/Code/invalidSignatureShare`` naming `party` for a wrong size or a
    ///   value not below the group order.
    public static func parse(_ rawRepresentation: some ContiguousBytes, curve: Curve, party: Int) throws -> Scalar {
        do {
            return try Scalar(rawRepresentation: rawRepresentation, curve: curve)
        } catch let error as ShareCryptoError {
            throw ShareCryptoError(
                .invalidSignatureShare, "party \(party)'s signature share: \(error.reason)", party: party)
        }
    }
}
