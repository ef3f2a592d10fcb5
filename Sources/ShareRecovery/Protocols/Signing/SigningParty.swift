public import ShareCrypto

/// One signer's role in FROST signing (docs/formats.md §11): round 1 commits to a fresh nonce pair,
/// round 2 signs the agreed ``SigningPackage`` with it, once.
///
/// Like every protocol role here it takes messages and returns messages, and knows nothing of
/// transport or storage. Its state between rounds is the `FrostSigningNonce`: single use (a
/// second signature with it throws `nonceReused`) and wiped after signing.
public struct SigningParty: Sendable, CustomStringConvertible {
    /// The signer's share, with its secret.
    public let share: ShareRecord
    /// The mode.
    public let mode: SigningMode

    /// A signer.
    /// - Parameters:
    ///   - share: A signing share with its secret.
    ///   - mode: A mode of the share's curve.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a share without secret, a backup
    ///   share, or a mode of another curve.
    public init(share: ShareRecord, mode: SigningMode) throws(ShareRecoveryError) {
        guard share.secret != nil else {
            throw ShareRecoveryError(
                .invalidParameters, "signing needs the share's secret; this record is a public description")
        }
        guard share.kind == .signing else {
            throw ShareRecoveryError(
                .invalidParameters, "a backup share does not sign; recover a signing set from it first")
        }
        try mode.check(on: share.curve)
        self.share = share
        self.mode = mode
    }

    /// Round 1: a fresh single-use nonce pair from the system CSPRNG mixed with the share, as the
    /// mode's standard says. Publish its `FrostSigningNonce.commitment`; keep the nonce for round 2.
    /// - Parameters:
    ///   - message: The message, if known now (bip340 binds it into the nonce as defence in depth).
    ///   - random: The random source.
    public func commit(message: [UInt8]? = nil, using random: some RandomSource = SystemRandom()) -> FrostSigningNonce {
        commit(message: message, boundKey: share.publicKey, using: random)
    }

    /// Round 1 for a tweaked signature (a derived or Taproot key, docs/derivation.md): as
    /// ``commit(message:using:)``, and bip340's nonce binds the tweaked key, as the draft's NonceGen
    /// recommends once tweaks are known.
    /// - Parameters:
    ///   - message: The message, if known now.
    ///   - tweaks: What the package will be tweaked for.
    ///   - random: The random source.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for tweaks in mode rfc9591 or on ed25519,
    ///   or a path step BIP-32 declares invalid.
    public func commit(message: [UInt8]? = nil, tweaks: SigningTweaks, using random: some RandomSource = SystemRandom())
        throws(ShareRecoveryError)
        -> FrostSigningNonce
    {
        try tweaks.check(mode: mode, curve: share.curve)
        let key = try tweaks.isEmpty ? share.publicKey : tweaks.apply(to: share.publicKey).signingKey
        return commit(message: message, boundKey: key, using: random)
    }

    private func commit(message: [UInt8]?, boundKey: Point, using random: some RandomSource) -> FrostSigningNonce {
        // A record with a secret always has a valid public share.
        let secret = share.secret!
        switch mode {
        case .rfc9591:
            return FrostRFC9591.generateNonce(share: secret, using: random)
        case .bip340:
            return FrostBIP340.generateNonce(
                share: secret, publicShare: try? share.publicShare, groupKey: boundKey, message: message,
                extraInput: nil, using: random)
        }
    }

    /// Round 2: this signer's signature share over the package. Consumes the nonce.
    /// - Parameters:
    ///   - nonce: The nonce from ``commit(message:using:)`` whose commitment the package carries for this signer.
    ///   - package: The agreed package.
    /// - Returns: The signature share (a scalar; send its 32-byte encoding).
    /// - Throws: ``ShareRecoveryError``: `nonceReused` for a nonce already used or discarded;
    ///   `invalidParameters` when the share is not of the package's signing set (another set, or an
    ///   older generation after a recovery), when the package lacks this signer or carries another
    ///   commitment for it, or for another mode.
    public func sign(nonce: FrostSigningNonce, package: SigningPackage) throws(ShareRecoveryError) -> Scalar {
        guard share.isSameSet(as: package.signingSet) else {
            throw ShareRecoveryError(
                .invalidParameters,
                "this share is of set \(share.setId) generation \(share.generation); the package signs for set \(package.signingSet.setId) generation \(package.signingSet.generation). A share of an older generation cannot sign.",
                party: share.partyIndex)
        }
        guard package.mode == mode else {
            throw ShareRecoveryError(
                .invalidParameters, "this signer signs in mode \(mode); the package is in mode \(package.mode)")
        }
        guard let commitment = package.commitments[share.partyIndex], commitment == nonce.commitment else {
            throw ShareRecoveryError(
                .invalidParameters, "the package carries no commitment, or another one, for party \(share.partyIndex)",
                party: share.partyIndex)
        }
        guard !nonce.isConsumed else {
            throw ShareRecoveryError(
                .nonceReused, "this nonce already signed (or was discarded); start again from round 1",
                party: share.partyIndex)
        }
        let secret = share.secret!
        let index = share.partyIndex
        return try mappingCryptoErrors { () throws -> Scalar in
            switch try package.session() {
            case .rfc9591(let frostPackage, let values, _):
                return try FrostRFC9591.sign(
                    nonce: nonce, share: secret, index: index, package: frostPackage, values: values)
            case .bip340(let session):
                return try FrostBIP340.sign(nonce: nonce, share: secret, index: index, session: session)
            }
        }
    }

    public var description: String { "SigningParty(party \(share.partyIndex), \(mode), share redacted)" }
}

/// All t signers in one process, through the same messages a network would carry (CLI `sign`, tests).
public enum ThresholdSigning {
    /// Signs with t or more shares of one signing set.
    /// - Parameters:
    ///   - shares: Signing shares of one set and generation, with secrets, distinct parties.
    ///   - message: The message.
    ///   - mode: The mode (default: the curve's).
    ///   - tweaks: A derivation path and/or Taproot (mode bip340 only; default none).
    ///   - random: The random source.
    /// - Returns: The package (public key, signing key, signers) and the signature, verified under the package's signing key.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for shares of different sets or
    ///   generations (naming the odd one), duplicate parties, too few shares, or tweaks in mode
    ///   rfc9591 or on ed25519; errors of the roles.
    public static func sign(
        shares: [ShareRecord], message: [UInt8], mode: SigningMode? = nil, tweaks: SigningTweaks = .none,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> (package: SigningPackage, signature: [UInt8]) {
        guard let first = shares.first else {
            throw ShareRecoveryError(.invalidParameters, "signing needs the signers' shares")
        }
        for share in shares.dropFirst() {
            guard let mismatch = share.setMismatch(with: first) else { continue }
            throw ShareRecoveryError(
                .invalidParameters, "\(mismatch): every signer needs a share of one wallet's current signing set",
                party: share.partyIndex)
        }
        guard Set(shares.map(\.partyIndex)).count == shares.count else {
            throw ShareRecoveryError(.invalidParameters, "two shares of one party; each signer signs once")
        }
        let mode = mode ?? .default(for: first.curve)
        let signers = try shares.map { (share) throws(ShareRecoveryError) in try SigningParty(share: share, mode: mode)
        }
        let nonces = try signers.map { (signer) throws(ShareRecoveryError) in
            try signer.commit(message: message, tweaks: tweaks, using: random)
        }
        var commitments: [Int: FrostNonceCommitment] = [:]
        for (signer, nonce) in zip(signers, nonces) { commitments[signer.share.partyIndex] = nonce.commitment }
        let package = try SigningPackage(
            signingSet: first, message: message, mode: mode, commitments: commitments, tweaks: tweaks)
        var signatureShares: [Int: Scalar] = [:]
        for (signer, nonce) in zip(signers, nonces) {
            signatureShares[signer.share.partyIndex] = try signer.sign(nonce: nonce, package: package)
        }
        return (package, try package.aggregate(signatureShares: signatureShares))
    }
}
