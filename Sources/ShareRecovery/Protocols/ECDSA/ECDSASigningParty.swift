public import ShareCrypto

/// One signer's role in threshold ECDSA by DKLs23 (docs/formats.md §12, docs/ecdsa.md): three rounds
/// of messages to the other signers, then the signature. Transport-free; it signs once
/// (`nonceReused` for a second use of any round).
///
/// A failed check throws ``ShareRecoveryError/Code/ecdsaCheckFailed`` naming the party where the
/// protocol can tell, and discards the ``PairSetup`` with that party (with every party otherwise).
public final class ECDSASigningParty {
    private let session: ECDSASigningSession
    /// The key the signature verifies under: the wallet key, or its child on the path.
    public let signingKey: Point

    /// Starts a signature.
    /// - Parameters:
    ///   - share: This party's secp256k1 signing share, with its secret.
    ///   - signers: The indices of the t signers, this party included.
    ///   - setups: This party's pair setup with each other signer.
    ///   - digest: The 32-byte digest (never hashed again).
    ///   - path: A non-hardened BIP-32 path from the wallet key (docs/formats.md §12), root by default.
    ///   - seed: 32 bytes this party draws every random value of the session from; fresh from the
    ///     system CSPRNG by default.
    /// - Throws: ``ShareRecoveryError``: `pairSetupStale` for a setup made before this share (another
    ///   set or generation); `ecdsaCheckFailed` for a discarded setup; `invalidParameters` for a
    ///   backup share, a share without secret, a wrong digest length or signer list.
    public init(
        share: ShareRecord, signers: [Int], setups: [PairSetup], digest: [UInt8], path: DerivationPath = .root,
        seed: SecureBytes = SystemRandom().secureBytes(count: 32)
    ) throws(ShareRecoveryError) {
        let (input, key) = try Self.input(share: share, signers: signers, setups: setups, digest: digest, path: path)
        signingKey = key
        session = try mappingCryptoErrors { try ECDSASigningSession(input, random: try ECDSASeed.signing(seed)) }
    }

    /// Restores a signer from its exported round state (``exportState()``), with the same share,
    /// signers, setups, digest and path. Delete the stored state as you load it: loading it twice
    /// would use the session's nonce twice.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for a state that does not parse or is of
    ///   another session; as ``init(share:signers:setups:digest:path:seed:)``.
    public init(
        share: ShareRecord, signers: [Int], setups: [PairSetup], digest: [UInt8], path: DerivationPath = .root,
        state: SecureBytes
    ) throws(ShareRecoveryError) {
        let (input, key) = try Self.input(share: share, signers: signers, setups: setups, digest: digest, path: path)
        signingKey = key
        do {
            session = try ECDSASigningSession(input, state: state)
        } catch let error as ShareCryptoError where error.code == .invalidEncoding {
            throw ShareRecoveryError(.malformedRecord, error.reason)
        } catch {
            throw ShareRecoveryError(error as? ShareCryptoError ?? ShareCryptoError(.invalidParameters, "\(error)"))
        }
    }

    /// The round state's versioned byte form, to keep (sealed) between rounds. It ends this value:
    /// continue from the bytes with ``init(share:signers:setups:digest:path:state:)``.
    /// - Throws: ``ShareRecoveryError/Code/nonceReused`` before round 1 or once the session has ended.
    public func exportState() throws(ShareRecoveryError) -> SecureBytes {
        try mappingCryptoErrors { try session.exportState() }
    }

    private static func input(
        share: ShareRecord, signers: [Int], setups: [PairSetup], digest: [UInt8], path: DerivationPath
    ) throws(ShareRecoveryError) -> (ECDSASigningSession.Input, Point) {
        guard let secret = share.secret, share.kind == .signing, share.curve == .secp256k1 else {
            throw ShareRecoveryError(.invalidParameters, "ECDSA signs with a secp256k1 signing share and its secret")
        }
        let peers = Set(signers).subtracting([share.partyIndex]).sorted()
        guard signers.count == share.threshold, Set(signers).count == signers.count, signers.contains(share.partyIndex),
            signers.allSatisfy({ (1...share.parties).contains($0) })
        else {
            throw ShareRecoveryError(
                .invalidParameters,
                "ECDSA needs exactly \(share.threshold) distinct signers of the set, this party among them")
        }
        let derived = try DerivedKey(walletPublicKey: share.publicKey, path: path)
        var byPeer = [Int: ECDSAPairSetup]()
        for setup in setups { byPeer[setup.peerIndex] = setup.setup }
        let input = try mappingCryptoErrors {
            ECDSASigningSession.Input(
                own: try Self.binding(share, index: share.partyIndex), share: secret,
                peers: try peers.map { try Self.binding(share, index: $0) }, setups: byPeer, publicKey: share.publicKey,
                tweak: derived.tweaks.reduce(Scalar(0, curve: .secp256k1), +), digest: digest)
        }
        return (input, derived.publicKey)
    }

    static func binding(_ share: ShareRecord, index: Int) throws -> ECDSAPartyBinding {
        try ECDSAPartyBinding(index: index, setId: share.setId.bytes, generation: share.generation)
    }

    /// Runs `body`; a message that does not parse becomes `ecdsaCheckFailed` naming its sender.
    static func blaming<R>(_ peer: Int, _ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as ShareCryptoError where error.code == .invalidEncoding {
            throw ShareCryptoError(.ecdsaCheckFailed, error.reason, party: peer)
        }
    }

    /// Round 1: the message to each other signer, by index.
    public func round1() throws(ShareRecoveryError) -> [Int: [UInt8]] {
        try mappingCryptoErrors { try session.round1Messages() }
    }

    /// Round 2: from every other signer's round-1 message, the message to each.
    public func round2(_ messages: [Int: [UInt8]]) throws(ShareRecoveryError) -> [Int: [UInt8]] {
        try mappingCryptoErrors { try session.round2(messages) }
    }

    /// Round 3: from every other signer's round-2 message, this signer's broadcast to all.
    public func round3(_ messages: [Int: [UInt8]]) throws(ShareRecoveryError) -> [UInt8] {
        try mappingCryptoErrors { try session.round3(messages) }
    }

    /// The signature from every signer's round-3 broadcast (this one's included), verified under
    /// ``signingKey``, low-s, with its recovery id.
    public func signature(_ broadcasts: [Int: [UInt8]]) throws(ShareRecoveryError) -> ECDSASignature {
        try mappingCryptoErrors { try session.finish(broadcasts) }
    }
}
