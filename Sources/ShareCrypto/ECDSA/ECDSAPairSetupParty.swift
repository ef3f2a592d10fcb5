/// One party's side of a pair setup (docs/ecdsa.md "Pair setup"): two rounds, each one message to
/// the peer, after which both hold an ``ECDSAPairSetup``. Every random value comes from `random`
/// in this order: the base OT sender's `a` and proof nonce `k`, the 32-byte zero-share
/// contribution, Δ (32 bytes), then the 256 receiver scalars `b_l`.
package final class ECDSAPairSetupParty {
    private enum State {
        case started(a: Scalar, bigA: Point, contribution: SecureBytes)
        case answered(a: Scalar, bigA: Point, seed: SecureBytes, delta: SecureBytes, keys: [SecureBytes])
        case finished
    }

    package let own: ECDSAPartyBinding
    package let peer: ECDSAPartyBinding
    private let random: any RandomSource
    private var state: State
    /// Round 1's message to the peer.
    package let round1Message: [UInt8]

    /// Starts the setup.
    /// - Parameters:
    ///   - own: This party's binding.
    ///   - peer: The peer's binding (same set and generation for a signing pair).
    ///   - random: The session's random source (a `DeterministicRandom` over the session seed).
    package init(own: ECDSAPartyBinding, peer: ECDSAPartyBinding, random: some RandomSource) throws {
        guard own.index != peer.index else {
            throw ShareCryptoError(.invalidParameters, "a pair setup needs two different parties")
        }
        self.own = own
        self.peer = peer
        self.random = random
        // This party is the base OT sender of the direction in which it receives in the extension.
        let context = ECDSAPartyBinding.directionContext(receiver: own, sender: peer)
        let (a, message) = try BaseOT.senderStart(context: context, random: random)
        let contribution = random.secureBytes(count: 32)
        state = .started(a: a, bigA: message.a, contribution: contribution)
        // Round 1: `A (33) || K (33) || z (32) || zero-share contribution (32)`.
        round1Message = message.bytes + contribution.revealedBytes()
    }

    /// Round 2: answers the peer's round 1 as base OT receiver with choice bits Δ.
    /// - Returns: `B_1 || … || B_256`, 33 bytes each.
    package func round2(peerMessage: [UInt8]) throws -> [UInt8] {
        guard case .started(let a, let bigA, let contribution) = state else {
            throw ShareCryptoError(.nonceReused, "this pair setup party has already answered round 1")
        }
        state = .finished
        let parsed = try ECDSAMessage.SetupRound1(peerMessage, from: peer.index)
        let message = BaseOT.SenderMessage(
            a: parsed.a, proofCommitment: parsed.proofCommitment, proofResponse: parsed.proofResponse)
        let peerContribution = parsed.contribution
        let (low, high) = own.index < peer.index ? (contribution, peerContribution) : (peerContribution, contribution)
        let seed = ECDSAHash.secretDigest(
            "pair/zero-seed",
            [
                .bytes(own.index < peer.index ? own.bytes : peer.bytes),
                .bytes(own.index < peer.index ? peer.bytes : own.bytes), .secret(low), .secret(high),
            ])
        let delta = random.secureBytes(count: 32)
        let context = ECDSAPartyBinding.directionContext(receiver: peer, sender: own)
        let (points, keys) = try BaseOT.receive(
            context: context, message: message, delta: delta, random: random, peer: peer.index)
        state = .answered(a: a, bigA: bigA, seed: seed, delta: delta, keys: keys)
        return points.flatMap(\.rawRepresentation)
    }

    /// Finishes with the peer's round 2.
    /// - Returns: The pair setup, to be sealed and stored.
    package func finish(peerMessage: [UInt8]) throws -> ECDSAPairSetup {
        guard case .answered(let a, let bigA, let seed, let delta, let keys) = state else {
            throw ShareCryptoError(.nonceReused, "this pair setup party is not waiting for round 2")
        }
        state = .finished
        let points = try ECDSAMessage.SetupRound2(peerMessage, from: peer.index).points
        let context = ECDSAPartyBinding.directionContext(receiver: own, sender: peer)
        let (zero, one) = try BaseOT.senderKeys(context: context, a: a, bigA: bigA, points: points, peer: peer.index)
        return ECDSAPairSetup(
            own: own, peer: peer,
            material: .init(delta: delta, senderKeys: keys, receiverKeys0: zero, receiverKeys1: one, zeroSeed: seed))
    }
}
