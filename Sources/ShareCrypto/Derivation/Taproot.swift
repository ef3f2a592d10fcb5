/// BIP-341 key-path outputs without a script tree: the output key commits to an unspendable script
/// path, `Q = lift_x(P) + t·G` with `t = hash_TapTweak(bytes(P))`, as BIP-341 recommends when no
/// script path is wanted (so nobody can hide one in the key).
public enum Taproot {
    /// The tweak `t = int(hash_TapTweak(bytes(P)))` of an internal key with no script tree.
    /// - Parameter internalKey: P, a secp256k1 point (only its x coordinate counts).
    /// - Returns: t, as a scalar: a signer applies it as an x-only tweak.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 key;
    ///   ``ShareCryptoError/Code/invalidScalar`` when the hash is ≥ n (BIP-341 fails there; probability below 2^-127).
    public static func tweak(internalKey: Point) throws -> Scalar {
        guard internalKey.curve == .secp256k1 else {
            throw ShareCryptoError(
                .invalidParameters, "Taproot keys are secp256k1 keys; this key is on \(internalKey.curve)")
        }
        let hash = TaggedHash.publicHash(tag: "TapTweak", internalKey.xOnlyRepresentation)
        do {
            return try Scalar(rawRepresentation: hash, curve: .secp256k1)
        } catch {
            throw ShareCryptoError(
                .invalidScalar, "hash_TapTweak of this key is not below n; BIP-341 has no output key for it")
        }
    }

    /// The output key `Q = lift_x(P) + t·G` (BIP-341 `taproot_tweak_pubkey` with an empty script
    /// commitment). Its x coordinate is the witness program; its parity is what a control block would carry.
    /// - Parameter internalKey: P, a secp256k1 point.
    /// - Returns: Q, with its parity.
    /// - Throws: As ``tweak(internalKey:)``; ``ShareCryptoError/Code/invalidPoint`` when Q is the identity.
    public static func outputKey(internalKey: Point) throws -> Point {
        let t = try tweak(internalKey: internalKey)
        guard let key = Point.sumAllowingIdentity([internalKey.withEvenY, Point.generatorTimesAllowingIdentity(t)])
        else {
            throw ShareCryptoError(.invalidPoint, "the Taproot output key of this key is the identity")
        }
        return key
    }
}
