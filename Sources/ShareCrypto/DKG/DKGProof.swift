#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The Schnorr proof of knowledge of a DKG party's constant term a_{i,0} (docs/formats.md §10 step 1),
/// as frost-core's `keys::dkg` makes it: `R = k·G`, `c = H_dkg(i || C_{i,0} || R)`,
/// `μ = k + a_{i,0}·c`. It binds the party index, so one party's proof cannot be replayed as another's.
public struct DKGProof: Sendable, Equatable {
    /// R = k·G.
    public let commitment: Point
    /// μ = k + a_{i,0}·c.
    public let response: Scalar

    /// Pairs the two halves.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` when they are on different curves.
    public init(commitment: Point, response: Scalar) throws {
        guard commitment.curve == response.curve else {
            throw ShareCryptoError(.invalidParameters, "the proof's R and μ are on different curves")
        }
        self.commitment = commitment
        self.response = response
    }

    /// `R || μ` in the curve's encodings, frost-core's serialisation (65 bytes on secp256k1, 64 on ed25519).
    public var rawRepresentation: [UInt8] { commitment.rawRepresentation + response.rawRepresentation.revealedBytes() }

    /// Parses `R || μ`.
    /// - Parameters:
    ///   - rawRepresentation: A point encoding followed by a 32-byte scalar.
    ///   - curve: The curve.
    ///   - party: The sender, named in the error.
    /// - Throws: ``ShareCryptoError/Code/dkgProofFailed`` naming `party` when either half does not parse:
    ///   a proof that cannot be read is a proof that fails.
    public init(rawRepresentation: some ContiguousBytes, curve: Curve, party: Int) throws {
        let bytes = rawRepresentation.withUnsafeBytes { Array($0) }
        let size = curve.pointCount
        guard bytes.count == size + 32 else {
            throw ShareCryptoError(.dkgProofFailed, "a proof is \(size + 32) bytes, got \(bytes.count)", party: party)
        }
        do {
            try self.init(
                commitment: Point(rawRepresentation: bytes[0..<size], curve: curve),
                response: Scalar(rawRepresentation: bytes[size...], curve: curve))
        } catch let error as ShareCryptoError {
            throw ShareCryptoError(.dkgProofFailed, "party \(party)'s proof: \(error.reason)", party: party)
        }
    }

    /// Proves knowledge of `secret` with a fresh nonce k.
    /// - Parameters:
    ///   - secret: a_{i,0}, non-zero.
    ///   - index: The prover's party index.
    ///   - random: The random source of k (the system CSPRNG in production).
    public static func prove(secret: Scalar, index: Int, using random: some RandomSource = SystemRandom()) throws
        -> DKGProof
    {
        try prove(secret: secret, index: index, nonce: Scalar.random(on: secret.curve, using: random))
    }

    /// Proves knowledge of `secret` with an explicit nonce k (vectors fix it).
    /// - Parameters:
    ///   - secret: a_{i,0}, non-zero.
    ///   - index: The prover's party index.
    ///   - nonce: k, non-zero, used for this proof only.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for a zero secret or nonce.
    public static func prove(secret: Scalar, index: Int, nonce: Scalar) throws -> DKGProof {
        guard secret.curve == nonce.curve else {
            throw ShareCryptoError(.invalidScalar, "secret and nonce on two curves")
        }
        let publicCommitment = try Point(generatorTimes: secret)
        let commitment = try Point(generatorTimes: nonce)
        let challenge = challenge(index: index, publicCommitment: publicCommitment, commitment: commitment)
        return try DKGProof(commitment: commitment, response: nonce + secret * challenge)
    }

    /// Checks `μ·G == R + c·C_{i,0}`.
    /// - Parameters:
    ///   - index: The prover's party index.
    ///   - publicCommitment: C_{i,0}, the prover's first commitment.
    public func verify(index: Int, publicCommitment: Point) -> Bool {
        guard publicCommitment.curve == commitment.curve else { return false }
        let challenge = Self.challenge(index: index, publicCommitment: publicCommitment, commitment: commitment)
        let left = Point.generatorTimesAllowingIdentity(response)
        return left
            == Point.sumAllowingIdentity([commitment, publicCommitment.multipliedAllowingIdentity(by: challenge)])
    }

    /// c = H_dkg(i || C_{i,0} || R), the identifier serialised as a scalar of the curve (frost-core).
    static func challenge(index: Int, publicCommitment: Point, commitment: Point) -> Scalar {
        let curve = commitment.curve
        let preimage =
            FrostRFC9591.identifier(index, curve) + publicCommitment.rawRepresentation + commitment.rawRepresentation
        return FrostCiphersuite(curve: curve).hdkg(preimage)
    }
}
