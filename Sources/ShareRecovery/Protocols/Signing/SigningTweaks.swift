public import ShareCrypto

/// What a signature is tweaked for (docs/derivation.md): a child of the wallet key by a BIP-32
/// path, then, optionally, that key's BIP-341 Taproot output key with no script tree. Mode bip340
/// on secp256k1 only.
///
/// A package carries the path and the Taproot flag, never raw tweak values: every signer computes
/// the tweaks itself from Y, as the BIP FROST-signing draft asks (arbitrary tweaks from a
/// coordinator are not known to be safe).
public struct SigningTweaks: Sendable, Hashable, CustomStringConvertible {
    /// The BIP-32 path from the wallet key (``DerivationPath/root`` for none).
    public let path: DerivationPath
    /// Whether the signature is a BIP-341 key-path signature under the output key of the path's key.
    public let taproot: Bool

    /// No tweak: the signature verifies under Y.
    public static let none = SigningTweaks()

    /// Tweaks for a child key and/or its Taproot output key.
    /// - Parameters:
    ///   - path: The derivation path (default: none).
    ///   - taproot: Whether to sign under the Taproot output key.
    public init(path: DerivationPath = .root, taproot: Bool = false) {
        self.path = path
        self.taproot = taproot
    }

    /// Whether nothing is tweaked.
    public var isEmpty: Bool { path.isRoot && !taproot }

    /// Checks that a mode can sign with these tweaks.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when there are tweaks and the wallet
    ///   is on ed25519 (no standard for its threshold derivation) or the mode is rfc9591 (RFC 9591
    ///   defines no tweaks).
    public func check(mode: SigningMode, curve: Curve) throws(ShareRecoveryError) {
        guard !isEmpty else { return }
        guard curve == .secp256k1 else {
            throw ShareRecoveryError(
                .invalidParameters,
                "\(self) is for secp256k1 wallets in mode bip340: ed25519 has no standard non-hardened threshold derivation nor Taproot (docs/derivation.md)"
            )
        }
        guard mode == .bip340 else {
            throw ShareRecoveryError(
                .invalidParameters,
                "\(self) signs in mode bip340 only: RFC 9591 defines no key tweaks, so mode \(mode) cannot sign for a derived or Taproot key"
            )
        }
    }

    /// What these tweaks do to a wallet key.
    public struct Applied: Sendable {
        /// The child key at the path (Y itself for the root).
        public let derivedKey: DerivedKey
        /// The key the signature verifies under: the Taproot output key, else the derived key.
        public let signingKey: Point
        /// The draft's tweaks, in order: the path's plain tweaks, then the x-only TapTweak.
        public let frostTweaks: [FrostBIP340.Tweak]
    }

    /// Applies the tweaks to a secp256k1 wallet key.
    /// - Parameter walletPublicKey: Y.
    /// - Returns: The derived key, the signing key and the draft's tweak list.
    /// - Throws: As ``DerivedKey/init(walletPublicKey:path:)``; `invalidScalar`/`invalidPoint` in the
    ///   (negligible) cases where BIP-341 has no output key.
    public func apply(to walletPublicKey: Point) throws(ShareRecoveryError) -> Applied {
        let derived = try DerivedKey(walletPublicKey: walletPublicKey, path: path)
        var frostTweaks = derived.tweaks.map { FrostBIP340.Tweak($0, isXOnly: false) }
        var signingKey = derived.publicKey
        if taproot {
            try mappingCryptoErrors {
                frostTweaks.append(FrostBIP340.Tweak(try Taproot.tweak(internalKey: derived.publicKey), isXOnly: true))
                signingKey = try Taproot.outputKey(internalKey: derived.publicKey)
            }
        }
        return Applied(derivedKey: derived, signingKey: signingKey, frostTweaks: frostTweaks)
    }

    /// `m/0/1`, `m/0/1 + Taproot`, `Taproot` or `no tweak`.
    public var description: String {
        switch (path.isRoot, taproot) {
        case (true, false): "no tweak"
        case (true, true): "Taproot"
        case (false, false): "path \(path)"
        case (false, true): "path \(path) + Taproot"
        }
    }
}
