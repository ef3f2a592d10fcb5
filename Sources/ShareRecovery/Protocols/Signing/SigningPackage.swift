public import ShareCrypto

/// What the signers of one signature agree on after round 1 (docs/formats.md §11): the signing set (a
/// public description), the message, the mode, every signer's nonce commitment, keyed by party
/// index, and what the key is tweaked for (a BIP-32 path, Taproot; docs/derivation.md). Anyone
/// holding it can check each signature share and aggregate; no secret is in it.
public struct SigningPackage: Sendable {
    /// The signing set, without a secret.
    public let signingSet: ShareRecord
    /// The message.
    public let message: [UInt8]
    /// The mode.
    public let mode: SigningMode
    /// Party index → that signer's round-1 commitment; the keys are the signers.
    public let commitments: [Int: FrostNonceCommitment]
    /// What the signature is tweaked for: ``SigningTweaks/none`` signs under Y.
    public let tweaks: SigningTweaks
    /// The key the signature verifies under: Y, the child key at the path, or its Taproot output key.
    public let signingKey: Point
    /// The draft's tweak list, each signer's own computation from Y and ``tweaks``.
    let frostTweaks: [FrostBIP340.Tweak]

    /// Checks the package.
    /// - Parameters:
    ///   - signingSet: Any record of the signing set (its secret is dropped).
    ///   - message: The message, any length.
    ///   - mode: A mode of the set's curve.
    ///   - commitments: At least t signers of the set, commitments on its curve.
    ///   - tweaks: A derivation path and/or Taproot (mode bip340 only; default none).
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a backup set, a mode of another
    ///   curve, too few signers or an index outside the set (naming it), tweaks in mode rfc9591 or
    ///   on ed25519; `invalidPoint` for a commitment on another curve.
    public init(
        signingSet: ShareRecord, message: [UInt8], mode: SigningMode, commitments: [Int: FrostNonceCommitment],
        tweaks: SigningTweaks = .none
    ) throws(ShareRecoveryError) {
        guard signingSet.kind == .signing else {
            throw ShareRecoveryError(
                .invalidParameters, "a backup set does not sign; recover a signing set from it first")
        }
        try mode.check(on: signingSet.curve)
        guard commitments.count >= signingSet.threshold else {
            throw ShareRecoveryError(
                .invalidParameters,
                "\(commitments.count) signers; this \(signingSet.threshold)-of-\(signingSet.parties) set needs \(signingSet.threshold)"
            )
        }
        for (index, commitment) in commitments {
            guard (1...signingSet.parties).contains(index) else {
                throw ShareRecoveryError(.invalidParameters, "party \(index) is not in the signing set", party: index)
            }
            guard commitment.curve == signingSet.curve else {
                throw ShareRecoveryError(
                    .invalidPoint, "party \(index)'s commitment is not on \(signingSet.curve)", party: index)
            }
        }
        try tweaks.check(mode: mode, curve: signingSet.curve)
        if tweaks.isEmpty {
            signingKey = signingSet.publicKey
            frostTweaks = []
        } else {
            let applied = try tweaks.apply(to: signingSet.publicKey)
            signingKey = applied.signingKey
            frostTweaks = applied.frostTweaks
        }
        self.signingSet = signingSet.publicDescription
        self.message = message
        self.mode = mode
        self.commitments = commitments
        self.tweaks = tweaks
    }

    /// The signers, ascending.
    public var signers: [Int] { commitments.keys.sorted() }

    /// The wallet public key Y.
    public var publicKey: Point { signingSet.publicKey }

    /// The mode's own session over this package: RFC 9591's signing package and session values, or
    /// the BIP draft's session context.
    enum Session {
        case rfc9591(FrostSigningPackage, FrostRFC9591.SessionValues, publicShares: [Int: Point])
        case bip340(FrostBIP340.Session)
    }

    func session() throws(ShareRecoveryError) -> Session {
        try mappingCryptoErrors {
            var publicShares: [Int: Point] = [:]
            for index in signers {
                publicShares[index] = try Shamir.publicShare(index: index, commitments: signingSet.commitments)
            }
            switch mode {
            case .rfc9591:
                // One computation of the session values serves signing and aggregation alike.
                let package = try FrostSigningPackage(groupKey: publicKey, message: message, commitments: commitments)
                return .rfc9591(package, try FrostRFC9591.sessionValues(package), publicShares: publicShares)
            case .bip340:
                let context = try FrostBIP340.SignersContext(
                    threshold: signingSet.threshold, parties: signingSet.parties, publicShares: publicShares,
                    groupKey: publicKey)
                let nonce = FrostBIP340.AggregateNonce(aggregating: signers.map { commitments[$0]! })
                return .bip340(
                    try FrostBIP340.Session(
                        signersContext: context, aggregateNonce: nonce, message: message, tweaks: frostTweaks))
            }
        }
    }

    /// Verifies every signature share (§11: each before aggregation) and aggregates them.
    /// - Parameter signatureShares: Party index → that signer's share, exactly the signers.
    /// - Returns: The signature, which ``SignatureVerifier`` accepts under ``signingKey`` (Y when untweaked).
    /// - Throws: ``ShareRecoveryError``: `invalidSignatureShare` naming the first signer, ascending,
    ///   whose share does not verify; `invalidParameters` when the shares are not exactly the signers'.
    public func aggregate(signatureShares: [Int: Scalar]) throws(ShareRecoveryError) -> [UInt8] {
        guard Set(signatureShares.keys) == Set(signers) else {
            throw ShareRecoveryError(
                .invalidParameters,
                "signature shares from \(signatureShares.keys.sorted()), but the signers are \(signers)")
        }
        let signature = try mappingCryptoErrors { () throws -> [UInt8] in
            switch try session() {
            case .rfc9591(let package, let values, let publicShares):
                return try FrostRFC9591.aggregate(
                    signatureShares: signatureShares, publicShares: publicShares, package: package, values: values)
            case .bip340(let session):
                return try FrostBIP340.aggregateVerified(
                    partialSignatures: signatureShares, commitments: commitments, session: session)
            }
        }
        // Every share verified, so this holds; checking costs one verification and guards the claim
        // that the result is an ordinary signature.
        guard SignatureVerifier.verify(signature: signature, message: message, publicKey: signingKey, mode: mode) else {
            throw ShareRecoveryError(
                .invalidSignatureShare, "the aggregate signature does not verify under the signing key (\(tweaks))")
        }
        return signature
    }
}
