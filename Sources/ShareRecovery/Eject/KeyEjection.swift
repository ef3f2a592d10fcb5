public import ShareCrypto

/// Eject (docs/eject.md): the one place where a wallet's full private key is rebuilt, so that its
/// user can take the key to another wallet and leave. Nowhere else does the engine combine shares
/// into the key; signing and recovery never need it.
///
/// The key is `x = Σ λ_i·x_i` over any `t` shares of one set (Lagrange interpolation at zero,
/// docs/formats.md §2), checked against the set's public key before it is returned: `x·G` must equal
/// `Y = A_0`, or nothing is returned.
public enum KeyEjection {
    /// Rebuilds the full private key from `t` or more shares of one set (signing or backup kind:
    /// every set of a wallet shares the same key). Extra shares beyond the first `t` by index are
    /// ignored. This is the only function that rebuilds a key.
    /// - Parameter shares: Shares with their secrets, of one set (same walletId, curve, set id and commitments).
    /// - Returns: The rebuilt key, whose `x·G` equals the set's public key.
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for fewer than `t` shares, a share without
    ///   its secret or two shares of one index; `inconsistentShares` for shares of different sets;
    ///   `publicKeyMismatch` when the rebuilt key's public key is not the wallet's (a share is wrong).
    public static func rebuildKeyForEject(_ shares: [ShareRecord]) throws(ShareRecoveryError) -> EjectedKey {
        guard let first = shares.first else {
            throw ShareRecoveryError(.invalidParameters, "eject needs the wallet's shares; none were given")
        }
        if let mismatch = shares.lazy.compactMap({ $0.setMismatch(with: first) }).first {
            throw ShareRecoveryError(.inconsistentShares, "\(mismatch): the key is rebuilt from shares of one set")
        }
        guard shares.allSatisfy({ $0.secret != nil }) else {
            throw ShareRecoveryError(
                .invalidParameters, "every share must include its secret (a public description cannot rebuild the key)")
        }
        let indices = shares.map(\.partyIndex)
        guard Set(indices).count == indices.count else {
            throw ShareRecoveryError(.invalidParameters, "two of the shares are of the same party \(indices)")
        }
        guard shares.count >= first.threshold else {
            throw ShareRecoveryError(
                .invalidParameters, "the key needs \(first.threshold) shares of this set; \(shares.count) given")
        }
        let used = Array(shares.sorted { $0.partyIndex < $1.partyIndex }.prefix(first.threshold))
        let usedIndices = used.map(\.partyIndex)
        let key = try mappingCryptoErrors { () throws -> Scalar in
            var sum = Scalar(0, curve: first.curve)
            for share in used {
                // Checked above: every share has its secret.
                guard let secret = share.secret else { continue }
                let lambda = try Shamir.lagrangeCoefficientAtZero(
                    index: share.partyIndex, indices: usedIndices, curve: first.curve)
                sum = sum + lambda * secret
            }
            return sum
        }
        // x = 0 has no public key (the identity): no wallet key is zero, so a share is wrong.
        var rebuilt: Point?
        if !key.isZero { rebuilt = try mappingCryptoErrors { try Point(generatorTimes: key) } }
        guard let rebuilt, rebuilt == first.publicKey else {
            throw ShareRecoveryError(
                .publicKeyMismatch,
                "the rebuilt key's public key is not the wallet's \(first.publicKey.hex): a share is wrong; nothing was exported"
            )
        }
        return EjectedKey(walletId: first.walletId, publicKey: first.publicKey, privateKey: key)
    }
}

/// A wallet's full private key, rebuilt for eject (``KeyEjection/rebuildKeyForEject(_:)``). The
/// scalar lives in `SecureBytes` (wiped when the last copy goes); `description` shows only public
/// facts. The export forms are secret buffers too: write them to their destination and let them go.
public struct EjectedKey: Sendable, CustomStringConvertible {
    /// The wallet's id.
    public let walletId: String
    /// The wallet's public key Y (docs/formats.md §1 encoding), which the private key was checked against.
    public let publicKey: Point
    /// The private key scalar: secp256k1 big-endian; ed25519 little-endian (RFC 8032's byte order
    /// for scalars), not an RFC 8032 seed.
    public let privateKey: Scalar

    /// The curve.
    public var curve: Curve { publicKey.curve }

    /// The WIF version byte of the network the key is for.
    public enum WIFNetwork: UInt8, Sendable, CaseIterable {
        /// Bitcoin mainnet, `0x80` (WIF text starts with `K` or `L` when compressed).
        case mainnet = 0x80
        /// Bitcoin testnet, signet and regtest, `0xef` (text starts with `c`).
        case testnet = 0xEF
    }

    /// The 32 key bytes as lowercase hex, in a secret buffer: the big-endian private key on
    /// secp256k1 (what wallets import as a "raw private key"), the little-endian scalar on ed25519.
    public var privateKeyHex: SecureBytes { Hex.encodeSecret(privateKey.rawRepresentation) }

    /// Wallet Import Format (secp256k1 only): version byte, the 32 key bytes, `0x01` (the key's public
    /// key is used compressed, as this wallet's key is), in Base58Check.
    /// - Parameter network: The version byte.
    /// - Returns: The WIF text as ASCII bytes, in a secret buffer.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` on ed25519, which has no WIF.
    public func wif(network: WIFNetwork = .mainnet) throws(ShareRecoveryError) -> SecureBytes {
        guard curve == .secp256k1 else {
            throw ShareRecoveryError(
                .invalidParameters, "WIF is a secp256k1 format; an ed25519 key exports as its 32-byte scalar")
        }
        let payload = SecureBytes.concatenating([
            SecureBytes(copying: [network.rawValue]), privateKey.rawRepresentation, SecureBytes(copying: [0x01]),
        ])
        return Base58Check.encodeSecret(payload)
    }

    /// The BIP-32 extended private key of the wallet's root (secp256k1 only): BIP-328's chain code,
    /// the one `derive` and signing with a path use (docs/derivation.md), depth 0, no parent, then the
    /// key; so a BIP-32 wallet derives from it the same child keys. Its extended public key is the
    /// wallet's root xpub.
    /// - Parameter network: `mainnet` writes an `xprv` (version `0488ade4`), `testnet` a `tprv` (`04358394`).
    /// - Returns: The Base58Check text as ASCII bytes, in a secret buffer.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` on ed25519, which has no BIP-32.
    public func extendedPrivateKey(network: WIFNetwork = .mainnet) throws(ShareRecoveryError) -> SecureBytes {
        guard curve == .secp256k1 else {
            throw ShareRecoveryError(
                .invalidParameters,
                "BIP-32 extended keys are a secp256k1 format; an ed25519 key exports as its 32-byte scalar")
        }
        let version: [UInt8] = network == .mainnet ? [0x04, 0x88, 0xAD, 0xE4] : [0x04, 0x35, 0x83, 0x94]
        // version, depth 0, parent fingerprint 0, child number 0, chain code, 0x00, key (BIP-32 serialization).
        let header = version + [0] + [0, 0, 0, 0] + [0, 0, 0, 0] + ExtendedPublicKey.aggregateKeyChainCode + [0]
        return Base58Check.encodeSecret(
            SecureBytes.concatenating([SecureBytes(copying: header), privateKey.rawRepresentation]))
    }

    public var description: String {
        "EjectedKey(\(curve), wallet \(walletId), public key \(publicKey.hex), private key redacted)"
    }
}
