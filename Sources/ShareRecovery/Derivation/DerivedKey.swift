public import ShareCrypto

/// A child of a wallet's key by BIP-32 public derivation (docs/derivation.md): the root is BIP-328's
/// synthetic xpub of the wallet key Y (chain code SHA-256("MuSig2MuSig2MuSig2")), and each step of
/// the path is CKDpub. Its ``tweaks`` are what the signers add, as the BIP FROST-signing draft's
/// plain tweaks, to sign for the child without ever holding a child private key.
public struct DerivedKey: Sendable {
    /// Y, the wallet key.
    public let walletPublicKey: Point
    /// The path from Y.
    public let path: DerivationPath
    /// BIP-328's synthetic xpub of Y: what a watch-only wallet imports.
    public let rootExtendedKey: ExtendedPublicKey
    /// The extended key at ``path``.
    public let extendedKey: ExtendedPublicKey
    /// `I_L` of each step, in path order: the plain tweaks.
    public let tweaks: [Scalar]

    /// Derives along a path.
    /// - Parameters:
    ///   - walletPublicKey: Y, a secp256k1 wallet key.
    ///   - path: Non-hardened steps.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for an ed25519 key (no standard
    ///   exists for non-hardened threshold derivation there) or a step BIP-32 declares invalid
    ///   (`I_L ≥ n` or the identity: the reason says to use the next index).
    public init(walletPublicKey: Point, path: DerivationPath) throws(ShareRecoveryError) {
        guard walletPublicKey.curve == .secp256k1 else {
            throw ShareRecoveryError(
                .invalidParameters,
                "ed25519 wallets have no non-hardened child keys: no standard defines non-hardened derivation of an ed25519 threshold key (docs/derivation.md)"
            )
        }
        let root = try mappingCryptoErrors { try ExtendedPublicKey(aggregateKey: walletPublicKey) }
        var key = root
        var tweaks: [Scalar] = []
        for index in path.indices {
            (key, tweaks) = try mappingCryptoErrors {
                let (child, tweak) = try key.child(at: index)
                return (child, tweaks + [tweak])
            }
        }
        self.walletPublicKey = walletPublicKey
        self.path = path
        rootExtendedKey = root
        extendedKey = key
        self.tweaks = tweaks
    }

    /// The child public key.
    public var publicKey: Point { extendedKey.publicKey }

    /// The child's chain code.
    public var chainCode: [UInt8] { extendedKey.chainCode }
}
