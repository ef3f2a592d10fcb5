public import ShareCrypto

/// What a party keeps from its ECDSA pair setup with one other party of its signing set
/// (docs/formats.md §12): base OTs of both directions and the pair's zero-share seed, bound to both
/// parties' set and generation. Seal its ``rawRepresentation()`` at rest like a share.
///
/// A failed check of a signature with the peer discards the setup in memory; the caller must also
/// delete its stored form and make a fresh setup before signing with that peer again.
public final class PairSetup: Sendable, CustomStringConvertible {
    let setup: ECDSAPairSetup

    init(_ setup: ECDSAPairSetup) { self.setup = setup }

    /// This party's index.
    public var partyIndex: Int { setup.own.index }
    /// The peer's index.
    public var peerIndex: Int { setup.peer.index }
    /// The generation of the share set the setup was made for.
    public var generation: UInt32 { setup.own.generation }
    /// Whether an aborted signature has discarded this setup (it can no longer sign).
    public var isDiscarded: Bool { setup.isDiscarded }

    /// Whether the setup was made for this share: its party, set and generation.
    public func isMade(for share: ShareRecord) -> Bool {
        setup.own.index == share.partyIndex && setup.own.setId == share.setId.bytes
            && setup.own.generation == share.generation
    }

    /// Discards the setup in memory, as an aborted signature does: for the abort the other party
    /// reported (its check failed). Delete the stored form too and make a fresh setup.
    public func discard() { setup.discard() }

    /// The versioned byte form (docs/ecdsa.md "Pair setup"): secret, to be sealed.
    /// - Throws: ``ShareRecoveryError/Code/ecdsaCheckFailed`` once discarded.
    public func rawRepresentation() throws(ShareRecoveryError) -> SecureBytes {
        try mappingCryptoErrors { try setup.rawRepresentation() }
    }

    /// Reads a stored setup.
    /// - Parameter rawRepresentation: The bytes of ``rawRepresentation()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` when they do not parse.
    public convenience init(rawRepresentation: SecureBytes) throws(ShareRecoveryError) {
        do {
            self.init(try ECDSAPairSetup(rawRepresentation: rawRepresentation))
        } catch {
            throw ShareRecoveryError(.malformedRecord, "not an ECDSA pair setup of version 1: \(error)")
        }
    }

    public var description: String {
        "PairSetup(party \(partyIndex) with \(peerIndex), generation \(generation)\(isDiscarded ? ", discarded" : ""), secrets redacted)"
    }
}

/// One party's side of an ECDSA pair setup: two rounds of one message each way, then a ``PairSetup``.
/// The setup depends on the pair and their share sets only, never on the key.
public final class PairSetupParty {
    private let party: ECDSAPairSetupParty

    /// Starts the setup with `peer`.
    /// - Parameters:
    ///   - share: This party's signing share (its set and generation bind the setup).
    ///   - peer: The other party's index in the same signing set.
    ///   - seed: 32 bytes this party draws every random value from (docs/ecdsa.md); in production
    ///     fresh from the system CSPRNG.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a backup share, the party itself or
    ///   an index outside the set; `invalidScalar`-style length errors for a seed that is not 32 bytes.
    public init(share: ShareRecord, peer: Int, seed: SecureBytes = SystemRandom().secureBytes(count: 32))
        throws(ShareRecoveryError)
    {
        let (own, other) = try Self.bindings(share: share, peer: peer)
        party = try mappingCryptoErrors {
            try ECDSAPairSetupParty(own: own, peer: other, random: try ECDSASeed.pairSetup(seed, peer: peer))
        }
    }

    /// Restores a party from its exported state (``exportState()``), with the same share and peer.
    /// Delete the stored state as you load it.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for a state that does not parse or is of
    ///   another pair, set or generation; as ``init(share:peer:seed:)`` for the share and peer.
    public init(share: ShareRecord, peer: Int, state: SecureBytes) throws(ShareRecoveryError) {
        let (own, other) = try Self.bindings(share: share, peer: peer)
        do {
            party = try ECDSAPairSetupParty(own: own, peer: other, state: state)
        } catch {
            throw ShareRecoveryError(.malformedRecord, "not this pair's ECDSA pair setup state of version 1: \(error)")
        }
    }

    private static func bindings(share: ShareRecord, peer: Int) throws(ShareRecoveryError) -> (
        ECDSAPartyBinding, ECDSAPartyBinding
    ) {
        guard share.kind == .signing, share.curve == .secp256k1 else {
            throw ShareRecoveryError(.invalidParameters, "an ECDSA pair setup is made for secp256k1 signing shares")
        }
        guard peer != share.partyIndex, (1...share.parties).contains(peer) else {
            throw ShareRecoveryError(
                .invalidParameters, "the peer must be another party of the set (1…\(share.parties))")
        }
        return try mappingCryptoErrors {
            (
                try ECDSASigningParty.binding(share, index: share.partyIndex),
                try ECDSASigningParty.binding(share, index: peer)
            )
        }
    }

    /// The state between rounds as versioned bytes (docs/ecdsa.md "Pair setup states"), secret: seal
    /// it like a share. It ends this value; continue with ``init(share:peer:state:)``.
    /// - Throws: ``ShareRecoveryError/Code/nonceReused`` once the setup has finished or was exported.
    public func exportState() throws(ShareRecoveryError) -> SecureBytes {
        try mappingCryptoErrors { try party.exportState() }
    }

    /// Round 1's message to the peer.
    public var round1Message: [UInt8] { party.round1Message }

    /// Round 2: the answer to the peer's round 1.
    /// - Throws: ``ShareRecoveryError/Code/ecdsaCheckFailed`` naming the peer when its message does
    ///   not parse or its proof fails; `nonceReused` when called twice.
    public func round2(peerMessage: [UInt8]) throws(ShareRecoveryError) -> [UInt8] {
        try mappingCryptoErrors {
            try ECDSASigningParty.blaming(party.peer.index) { try party.round2(peerMessage: peerMessage) }
        }
    }

    /// The setup, from the peer's round 2.
    public func finish(peerMessage: [UInt8]) throws(ShareRecoveryError) -> PairSetup {
        try mappingCryptoErrors {
            PairSetup(try ECDSASigningParty.blaming(party.peer.index) { try party.finish(peerMessage: peerMessage) })
        }
    }
}
