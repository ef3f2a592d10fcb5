import CSodium

/// FROST signing as RFC 9591 specifies it, for FROST(Ed25519, SHA-512) and FROST(secp256k1, SHA-256)
/// (docs/formats.md §11, mode `rfc9591`). Identifiers are party indices. Pure functions: the caller
/// carries the messages between rounds.
public enum FrostRFC9591 {
    /// The values every participant derives from a signing package in round two (RFC 9591 §4.4–§4.6).
    public struct SessionValues: Sendable {
        /// ρ_i per signer (§4.4 compute_binding_factors).
        public let bindingFactors: [Int: Scalar]
        /// R = Σ D_i + ρ_i·E_i (§4.5 compute_group_commitment).
        public let groupCommitment: Point
        /// c = H2(R || Y || msg) (§4.6 compute_challenge).
        public let challenge: Scalar
    }

    // MARK: Round one

    /// RFC 9591 §4.1 nonce_generate: `H3(random_bytes(32) || SerializeScalar(secret))`.
    /// - Parameters:
    ///   - share: The signer's secret share.
    ///   - random: The random source (the system CSPRNG in production).
    static func generateNonceScalar(share: Scalar, using random: some RandomSource) -> Scalar {
        let randomBytes = random.secureBytes(count: 32)
        return FrostCiphersuite(curve: share.curve).h3([.secret(randomBytes), .secret(share.rawRepresentation)])
    }

    /// RFC 9591 §5.1 commit: a hiding and a binding nonce from `nonce_generate`, and their commitments.
    /// - Parameters:
    ///   - share: The signer's secret share.
    ///   - random: The random source (the system CSPRNG in production; vectors fix the 32-byte draws,
    ///     hiding first).
    /// - Returns: A single-use nonce whose ``FrostSigningNonce/commitment`` goes to the other signers.
    public static func generateNonce(share: Scalar, using random: some RandomSource = SystemRandom())
        -> FrostSigningNonce
    {
        while true {
            let hiding = generateNonceScalar(share: share, using: random)
            let binding = generateNonceScalar(share: share, using: random)
            // Zero has probability ~2^-252 per draw; draw again rather than fail.
            if let nonce = try? FrostSigningNonce(hiding: hiding, binding: binding) { return nonce }
        }
    }

    // MARK: Round two

    /// RFC 9591 §4.3 encode_group_commitment_list: `id || D || E` per signer, ascending by id.
    /// - Parameter package: The signing package.
    public static func encodeCommitmentList(_ package: FrostSigningPackage) -> [UInt8] {
        package.signers.flatMap { index -> [UInt8] in
            // Keys come from the dictionary itself.
            let commitment = package.commitments[index]!
            return identifier(index, package.curve) + commitment.hiding.rawRepresentation
                + commitment.binding.rawRepresentation
        }
    }

    /// The per-signer inputs of H1 in §4.4: `Y || H4(msg) || H5(commitment list) || id`.
    /// - Parameter package: The signing package.
    public static func bindingFactorInputs(_ package: FrostSigningPackage) -> [Int: [UInt8]] {
        let suite = FrostCiphersuite(curve: package.curve)
        let prefix =
            package.groupKey.rawRepresentation + suite.h4(package.message) + suite.h5(encodeCommitmentList(package))
        return Dictionary(uniqueKeysWithValues: package.signers.map { ($0, prefix + identifier($0, package.curve)) })
    }

    /// RFC 9591 §4.4–§4.6: binding factors, group commitment and challenge.
    /// - Parameter package: The signing package.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the group commitment is the identity
    ///   (only crafted commitments do that; RFC 9591 cannot serialise it).
    public static func sessionValues(_ package: FrostSigningPackage) throws -> SessionValues {
        let suite = FrostCiphersuite(curve: package.curve)
        let factors = bindingFactorInputs(package).mapValues { suite.h1($0) }
        var terms: [Point?] = []
        for (index, commitment) in package.commitments {
            // Keys are shared with `factors`.
            terms.append(commitment.hiding)
            terms.append(commitment.binding.multipliedAllowingIdentity(by: factors[index]!))
        }
        guard let groupCommitment = Point.sumAllowingIdentity(terms) else {
            throw ShareCryptoError(
                .invalidPoint, "the group commitment is the identity: the nonce commitments were crafted to cancel")
        }
        let challenge = suite.h2(
            groupCommitment.rawRepresentation + package.groupKey.rawRepresentation + package.message)
        return SessionValues(bindingFactors: factors, groupCommitment: groupCommitment, challenge: challenge)
    }

    /// RFC 9591 §5.2 sign: `z_i = d_i + e_i·ρ_i + λ_i·s_i·c`. Consumes the nonce.
    /// - Parameters:
    ///   - nonce: This signer's round-one nonce, whose commitment the package carries for `index`.
    ///   - share: The signer's secret share s_i.
    ///   - index: The signer's party index.
    ///   - package: The signing package.
    /// - Returns: The signature share z_i.
    /// - Throws: ``ShareCryptoError/Code/nonceReused`` for a used nonce;
    ///   ``ShareCryptoError/Code/invalidParameters`` when the package lacks this signer or carries
    ///   another commitment for it; ``ShareCryptoError/Code/invalidPoint`` for an identity group commitment.
    ///   The nonce is consumed only once the package has passed these checks.
    public static func sign(nonce: FrostSigningNonce, share: Scalar, index: Int, package: FrostSigningPackage) throws
        -> Scalar
    {
        precondition(share.curve == package.curve, "share and package of two curves")
        _ = try package.commitment(of: index, matching: nonce)
        return try sign(nonce: nonce, share: share, index: index, package: package, values: try sessionValues(package))
    }

    /// ``sign(nonce:share:index:package:)`` with the package's session values already computed
    /// (``sessionValues(_:)``), so a caller that needs them anyway computes them once.
    public static func sign(
        nonce: FrostSigningNonce, share: Scalar, index: Int, package: FrostSigningPackage, values: SessionValues
    ) throws -> Scalar {
        precondition(share.curve == package.curve, "share and package of two curves")
        _ = try package.commitment(of: index, matching: nonce)
        let lambda = try package.lagrangeCoefficient(of: index)
        let (hiding, binding) = try nonce.take()
        // Keys of the binding factors are the package's signers, which include `index`.
        return hiding + binding * values.bindingFactors[index]! + lambda * share * values.challenge
    }

    /// RFC 9591 §5.4 verify_signature_share: `z_i·G == D_i + ρ_i·E_i + (c·λ_i)·X_i`.
    /// - Parameters:
    ///   - signatureShare: z_i.
    ///   - index: The signer's party index.
    ///   - publicShare: X_i, the signer's public share.
    ///   - package: The signing package.
    ///   - values: The package's session values.
    /// - Returns: Whether the share verifies (`false` also for a signer outside the package).
    public static func verifySignatureShare(
        _ signatureShare: Scalar, index: Int, publicShare: Point, package: FrostSigningPackage, values: SessionValues
    ) -> Bool {
        guard let commitment = package.commitments[index], let rho = values.bindingFactors[index],
            let lambda = try? package.lagrangeCoefficient(of: index)
        else { return false }
        let left = Point.generatorTimesAllowingIdentity(signatureShare)
        let right = Point.sumAllowingIdentity([
            commitment.hiding, commitment.binding.multipliedAllowingIdentity(by: rho),
            publicShare.multipliedAllowingIdentity(by: values.challenge * lambda),
        ])
        return left == right
    }

    /// RFC 9591 §5.3 aggregate, after verifying every share (§5.4) so a bad one is named.
    /// - Parameters:
    ///   - signatureShares: Party index → z_i, exactly the package's signers.
    ///   - publicShares: Party index → X_i for (at least) every signer.
    ///   - package: The signing package.
    /// - Returns: The signature `R || z` (ed25519: 64 bytes, RFC 8032; secp256k1: 65 bytes, R compressed).
    /// - Throws: ``ShareCryptoError/Code/invalidSignatureShare`` naming the first signer (ascending)
    ///   whose share fails; ``ShareCryptoError/Code/invalidParameters`` when shares or public shares
    ///   do not cover the signer set; ``ShareCryptoError/Code/invalidPoint`` for an identity group commitment.
    public static func aggregate(
        signatureShares: [Int: Scalar], publicShares: [Int: Point], package: FrostSigningPackage
    ) throws -> [UInt8] {
        try aggregate(
            signatureShares: signatureShares, publicShares: publicShares, package: package,
            values: try sessionValues(package))
    }

    /// ``aggregate(signatureShares:publicShares:package:)`` with the session values already computed.
    public static func aggregate(
        signatureShares: [Int: Scalar], publicShares: [Int: Point], package: FrostSigningPackage, values: SessionValues
    ) throws -> [UInt8] {
        guard Set(signatureShares.keys) == Set(package.signers) else {
            throw ShareCryptoError(.invalidParameters, "signature shares must come from exactly the package's signers")
        }
        var z = Scalar(0, curve: package.curve)
        for index in package.signers {
            guard let publicShare = publicShares[index] else {
                throw ShareCryptoError(.invalidParameters, "no public share for party \(index)", party: index)
            }
            // Keys were checked equal to the signers above.
            let share = signatureShares[index]!
            guard verifySignatureShare(share, index: index, publicShare: publicShare, package: package, values: values)
            else {
                throw ShareCryptoError(
                    .invalidSignatureShare, "party \(index)'s signature share does not verify", party: index)
            }
            z = z + share
        }
        return values.groupCommitment.rawRepresentation + z.rawRepresentation.revealedBytes()
    }

    /// Verifies a signature under the group key with the mode's independent verifier: libsodium's
    /// `crypto_sign_verify_detached` on ed25519; RFC 9591 App. B `prime_order_verify` on secp256k1
    /// (cofactor 1).
    /// - Parameters:
    ///   - signature: 64 bytes (ed25519) or 65 bytes (secp256k1).
    ///   - message: The message.
    ///   - groupKey: Y.
    /// - Returns: Whether the signature is valid.
    public static func verify(signature: [UInt8], message: [UInt8], groupKey: Point) -> Bool {
        switch groupKey.curve {
        case .ed25519:
            guard signature.count == 64 else { return false }
            Sodium.ensureInitialised()
            return crypto_sign_verify_detached(signature, message, UInt64(message.count), groupKey.rawRepresentation)
                == 0
        case .secp256k1:
            guard signature.count == 65,
                let commitment = try? Point(rawRepresentation: signature[0..<33], curve: .secp256k1),
                let z = try? Scalar(rawRepresentation: signature[33...], curve: .secp256k1)
            else { return false }
            let c = FrostCiphersuite.secp256k1SHA256.h2(
                commitment.rawRepresentation + groupKey.rawRepresentation + message)
            let left = Point.generatorTimesAllowingIdentity(z)
            return left == Point.sumAllowingIdentity([commitment, groupKey.multipliedAllowingIdentity(by: c)])
        }
    }

    /// An identifier as RFC 9591 serialises it: the party index as a scalar of the curve.
    static func identifier(_ index: Int, _ curve: Curve) -> [UInt8] {
        Scalar(UInt64(index), curve: curve).rawRepresentation.revealedBytes()
    }
}
