/// One party's side of a pair setup (docs/ecdsa.md "Pair setup"): two rounds, each one message to
/// the peer, after which both hold an ``ECDSAPairSetup``. Every random value comes from `random`
/// in this order: the base OT sender's `a` and proof nonce `k`, the 32-byte zero-share
/// contribution, Δ (32 bytes), then the 256 receiver scalars `b_l`.
///
/// Between its rounds the party can leave memory as bytes (``exportState()``), like a signing
/// session's round state.
package final class ECDSAPairSetupParty {
    /// What round 2 draws (Δ and the `b_l`): drawn when round 2 runs, or ahead of it by an export,
    /// in the same order, so a restored party needs no random stream.
    private struct Round2Draws {
        let delta: SecureBytes
        let scalars: [Scalar]
    }

    private enum State {
        case started(a: Scalar, draws: Round2Draws?)
        case answered(a: Scalar, seed: SecureBytes, delta: SecureBytes, keys: [SecureBytes])
        case finished
    }

    package let own: ECDSAPartyBinding
    package let peer: ECDSAPartyBinding
    private let random: (any RandomSource)?
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
        state = .started(a: a, draws: nil)
        // Round 1: `A (33) || K (33) || z (32) || zero-share contribution (32)`.
        round1Message = message.bytes + contribution.revealedBytes()
    }

    private static let roundOneCount = BaseOT.SenderMessage.byteCount + 32

    private var bigA: Point {
        get throws { try Point(rawRepresentation: Array(round1Message[0..<33]), curve: .secp256k1) }
    }

    /// Round 2: answers the peer's round 1 as base OT receiver with choice bits Δ.
    /// - Returns: `B_1 || … || B_256`, 33 bytes each.
    package func round2(peerMessage: [UInt8]) throws -> [UInt8] {
        guard case .started(let a, let drawn) = state else {
            throw ShareCryptoError(.nonceReused, "this pair setup party has already answered round 1")
        }
        state = .finished
        guard let draws = drawn ?? random.map(Self.draw) else {
            throw ShareCryptoError(.nonceReused, "this pair setup party has no random values left")
        }
        let parsed = try ECDSAMessage.SetupRound1(peerMessage, from: peer.index)
        let message = BaseOT.SenderMessage(
            a: parsed.a, proofCommitment: parsed.proofCommitment, proofResponse: parsed.proofResponse)
        let peerContribution = parsed.contribution
        let contribution = SecureBytes(copying: Array(round1Message[BaseOT.SenderMessage.byteCount...]))
        let (low, high) = own.index < peer.index ? (contribution, peerContribution) : (peerContribution, contribution)
        let seed = ECDSAHash.secretDigest(
            "pair/zero-seed",
            [
                .bytes(own.index < peer.index ? own.bytes : peer.bytes),
                .bytes(own.index < peer.index ? peer.bytes : own.bytes), .secret(low), .secret(high),
            ])
        let context = ECDSAPartyBinding.directionContext(receiver: peer, sender: own)
        let (points, keys) = try BaseOT.receive(
            context: context, message: message, delta: draws.delta, scalars: draws.scalars, peer: peer.index)
        state = .answered(a: a, seed: seed, delta: draws.delta, keys: keys)
        return points.flatMap(\.rawRepresentation)
    }

    private static func draw(_ random: any RandomSource) -> Round2Draws {
        let delta = random.secureBytes(count: 32)
        return Round2Draws(delta: delta, scalars: BaseOT.receiverScalars(random: random))
    }

    /// Finishes with the peer's round 2.
    /// - Returns: The pair setup, to be sealed and stored.
    package func finish(peerMessage: [UInt8]) throws -> ECDSAPairSetup {
        guard case .answered(let a, let seed, let delta, let keys) = state else {
            throw ShareCryptoError(.nonceReused, "this pair setup party is not waiting for round 2")
        }
        state = .finished
        let points = try ECDSAMessage.SetupRound2(peerMessage, from: peer.index).points
        let context = ECDSAPartyBinding.directionContext(receiver: own, sender: peer)
        let (zero, one) = try BaseOT.senderKeys(
            context: context, a: a, bigA: try bigA, points: points, peer: peer.index)
        return ECDSAPairSetup(
            own: own, peer: peer,
            material: .init(delta: delta, senderKeys: keys, receiverKeys0: zero, receiverKeys1: one, zeroSeed: seed))
    }

    // MARK: State between rounds

    private static let stateVersion: UInt8 = 1

    /// The state's versioned byte form (docs/ecdsa.md "Pair setup states"), to keep sealed between
    /// rounds: `version (1) = 1 || phase (1: round 1 sent, 2: round 2 sent) || own binding (21) ||
    /// peer binding (21) || a (32) || round-1 message (130)`, then in phase 1 `Δ (32) || b_0 … b_255
    /// (32 each)` (drawn now, in round 2's order), in phase 2 `zero seed (32) || Δ (32) || the 256
    /// keys chosen by Δ (32 each)`. Exporting ends this value: continue from the bytes with
    /// ``init(own:peer:state:)``, and delete them as they are loaded.
    /// - Throws: `nonceReused` once the setup has finished (or was exported).
    package func exportState() throws -> SecureBytes {
        let header = SecureBytes(copying: [Self.stateVersion])
        let bindings = own.bytes + peer.bytes
        switch state {
        case .started(let a, let drawn):
            guard let draws = drawn ?? random.map(Self.draw) else { break }
            state = .finished
            return SecureBytes.concatenating(
                [
                    header, SecureBytes(copying: [1] + bindings), a.rawRepresentation,
                    SecureBytes(copying: round1Message),
                ]
                    + [draws.delta] + draws.scalars.map(\.rawRepresentation))
        case .answered(let a, let seed, let delta, let keys):
            state = .finished
            return SecureBytes.concatenating(
                [
                    header, SecureBytes(copying: [2] + bindings), a.rawRepresentation,
                    SecureBytes(copying: round1Message),
                ]
                    + [seed, delta] + keys)
        case .finished: break
        }
        throw ShareCryptoError(.nonceReused, "this pair setup party has finished or was exported; start a new setup")
    }

    /// Restores a party from ``exportState()``'s bytes, for the same two bindings.
    /// - Throws: `invalidEncoding` for bytes that do not parse or are of another pair.
    package init(own: ECDSAPartyBinding, peer: ECDSAPartyBinding, state bytes: SecureBytes) throws {
        self.own = own
        self.peer = peer
        random = nil
        let fixed = 2 + 2 * ECDSAPartyBinding.byteCount + 32 + Self.roundOneCount
        let tail = 32 + BaseOT.count * 32
        guard bytes.count == fixed + tail || bytes.count == fixed + 32 + tail else {
            throw ShareCryptoError(
                .invalidEncoding, "a pair setup state is \(fixed + tail) or \(fixed + 32 + tail) bytes")
        }
        var wire = ECDSAWire(try bytes.slice(0..<fixed).revealedBytes(), what: "ECDSA pair setup state")
        guard try wire.byte() == Self.stateVersion else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA pair setup state has an unknown version")
        }
        let phase = try wire.byte()
        guard phase == 1 || phase == 2, try ECDSAPartyBinding(reading: &wire) == own,
            try ECDSAPartyBinding(reading: &wire) == peer
        else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA pair setup state is of another pair or phase")
        }
        let a = try wire.scalar()
        round1Message = try wire.take(Self.roundOneCount)
        try wire.finish()
        var offset = fixed
        func next() throws -> SecureBytes {
            defer { offset += 32 }
            return try bytes.slice(offset..<offset + 32)
        }
        func scalar() throws -> Scalar {
            do { return try Scalar(rawRepresentation: try next().revealedBytes(), curve: .secp256k1) } catch {
                throw ShareCryptoError(.invalidEncoding, "ECDSA pair setup state: a scalar is not below n")
            }
        }
        if phase == 1 {
            guard bytes.count == fixed + tail else {
                throw ShareCryptoError(.invalidEncoding, "a phase-1 pair setup state is \(fixed + tail) bytes")
            }
            let delta = try next()
            state = .started(
                a: a, draws: Round2Draws(delta: delta, scalars: try (0..<BaseOT.count).map { _ in try scalar() }))
        } else {
            guard bytes.count == fixed + 32 + tail else {
                throw ShareCryptoError(.invalidEncoding, "a phase-2 pair setup state is \(fixed + 32 + tail) bytes")
            }
            let seed = try next()
            let delta = try next()
            state = .answered(a: a, seed: seed, delta: delta, keys: try (0..<BaseOT.count).map { _ in try next() })
        }
    }
}
