/// One signer's side of a DKLs23 signature (ePrint 2023/765, Protocol 3.6; docs/ecdsa.md): three
/// rounds of messages, then the signature. Transport-free: every round takes the messages addressed
/// to this party and returns the ones it sends.
///
/// The session signs once: calling a round twice, or out of order, throws `nonceReused`. A failed
/// check throws `ecdsaCheckFailed` naming the peer where the protocol can tell, and discards the pair
/// setup with that peer (with every peer when it cannot tell), so its correlations are never used
/// after an abort.
package final class ECDSASigningSession {
    /// What the session signs with.
    package struct Input {
        /// This party's binding (index, set, generation) and its secret share `x_i`.
        package let own: ECDSAPartyBinding
        package let share: Scalar
        /// The bindings of the other signers, each with this party's pair setup with it.
        package let peers: [ECDSAPartyBinding]
        package let setups: [Int: ECDSAPairSetup]
        /// The wallet key `Y` and the public BIP-32 tweak `t` (zero for the key itself): the session
        /// signs under `Y + t·G`.
        package let publicKey: Point
        package let tweak: Scalar
        /// The 32-byte digest, signed as is.
        package let digest: [UInt8]

        package init(
            own: ECDSAPartyBinding, share: Scalar, peers: [ECDSAPartyBinding], setups: [Int: ECDSAPairSetup],
            publicKey: Point, tweak: Scalar, digest: [UInt8]
        ) {
            self.own = own
            self.share = share
            self.peers = peers
            self.setups = setups
            self.publicKey = publicKey
            self.tweak = tweak
            self.digest = digest
        }
    }

    private struct PeerRound1 {
        let nonce: [UInt8]
        let commitment: [UInt8]
        let extensionMessage: [UInt8]
    }

    private enum State {
        case round1
        case round2(peers: [Int: PeerRound1])
        case round3(sid: [UInt8], sk: Scalar, aliceShares: [Int: (Scalar, Scalar)])
        case finish(bigR: Point, r: Scalar)
        case done
    }

    private let input: Input
    private let signingKey: Point
    private var state = State.round1
    private let material: [Int: ECDSAPairSetup.Material]
    // Round 1 values.
    private let nonce: [UInt8]
    private let instanceKey: Scalar
    private let instancePoint: Point
    private let phi: Scalar
    private let salt: [UInt8]
    private var bob: [Int: RandomVectorOLE.BobState] = [:]
    private var masks: [Int: (Scalar, Scalar)] = [:]
    private var round1: [Int: [UInt8]] = [:]

    /// The signers' indices, ascending, this party included.
    package var signers: [Int] { ([input.own.index] + input.peers.map(\.index)).sorted() }

    /// Starts a session.
    /// - Parameters:
    ///   - input: The share, peers, setups, key and digest.
    ///   - random: The session's random source: `DeterministicRandom` over the 32-byte session seed,
    ///     drawn in the order docs/ecdsa.md gives.
    /// - Throws: `pairSetupStale` when a setup is for another set or generation; `ecdsaCheckFailed`
    ///   when one was discarded; `invalidParameters` for a digest that is not 32 bytes or a missing setup.
    package init(_ input: Input, random: some RandomSource) throws {
        let material = try Self.material(for: input)
        self.input = input
        self.material = material
        signingKey = try input.tweak.isZero ? input.publicKey : input.publicKey + Point(generatorTimes: input.tweak)
        nonce = random.bytes(count: 32)
        instanceKey = Scalar.random(on: .secp256k1, using: random)
        instancePoint = try Point(generatorTimes: instanceKey)
        phi = Scalar.random(on: .secp256k1, using: random)
        salt = random.bytes(count: 32)
        let commitment = Self.commitment(index: input.own.index, nonce: nonce, point: instancePoint, salt: salt)
        for peer in input.peers.sorted(by: { $0.index < $1.index }) {
            let keys = material[peer.index]!
            let id = Self.extensionId(bob: input.own, alice: peer, nonce: nonce)
            let (message, state) = RandomVectorOLE.bobStart(
                keys0: keys.receiverKeys0, keys1: keys.receiverKeys1, id: id, random: random)
            bob[peer.index] = state
            masks[peer.index] = (
                Scalar.random(on: .secp256k1, using: random), Scalar.random(on: .secp256k1, using: random)
            )
            round1[peer.index] = nonce + commitment + message
        }
    }

    private static func material(for input: Input) throws -> [Int: ECDSAPairSetup.Material] {
        guard input.digest.count == 32 else {
            throw ShareCryptoError(.invalidParameters, "ECDSA signs a 32-byte digest, got \(input.digest.count) bytes")
        }
        guard !input.peers.isEmpty, Set(input.peers.map(\.index) + [input.own.index]).count == input.peers.count + 1
        else {
            throw ShareCryptoError(.invalidParameters, "an ECDSA session needs distinct signers besides this party")
        }
        var material = [Int: ECDSAPairSetup.Material]()
        for peer in input.peers {
            guard let setup = input.setups[peer.index] else {
                throw ShareCryptoError(.invalidParameters, "no pair setup with party \(peer.index); make one first")
            }
            material[peer.index] = try setup.use(own: input.own, peer: peer)
        }
        return material
    }

    /// Binds a stored state to the session's public inputs.
    private static func inputTag(_ input: Input) -> [UInt8] {
        ECDSAHash.digest(
            "state/input",
            [
                .bytes(input.own.bytes), .bytes(input.publicKey.rawRepresentation),
                .bytes(input.tweak.rawRepresentation.revealedBytes()), .bytes(input.digest),
            ]
                + input.peers.sorted { $0.index < $1.index }.map { .bytes($0.bytes) })
    }

    private static let stateVersion: UInt8 = 1

    /// The round state's versioned byte form (docs/ecdsa.md "Round states"), to keep between rounds
    /// (sealed: it holds the nonce). Exporting ends this value: the bytes are then the only copy of
    /// the state, and a restored state must be deleted from storage when it is loaded, or a second
    /// load would use the nonce twice.
    /// - Throws: `nonceReused` before round 1 was sent or after the session ended.
    package func exportState() throws -> SecureBytes {
        var parts = [SecureBytes]()
        func add(_ bytes: [UInt8]) { parts.append(SecureBytes(copying: bytes)) }
        let phase: UInt8
        switch state {
        case .round2: phase = 1
        case .round3: phase = 2
        case .finish: phase = 3
        case .round1, .done: throw Self.reused()
        }
        add([Self.stateVersion, phase] + Self.inputTag(input) + nonce)
        parts += [instanceKey.rawRepresentation, phi.rawRepresentation]
        add(salt)
        for peer in input.peers.map(\.index).sorted() {
            let state = bob[peer]!
            parts += [state.chi.rawRepresentation, state.choices, state.rows]
            parts += [masks[peer]!.0.rawRepresentation, masks[peer]!.1.rawRepresentation]
        }
        if case .round3(let sid, let sk, let aliceShares) = state {
            add(sid)
            parts.append(sk.rawRepresentation)
            for peer in input.peers.map(\.index).sorted() {
                add(round1Peers[peer]!.nonce + round1Peers[peer]!.commitment)
                parts += [aliceShares[peer]!.0.rawRepresentation, aliceShares[peer]!.1.rawRepresentation]
            }
        }
        if case .finish(let bigR, let r) = state {
            add(bigR.rawRepresentation)
            parts.append(r.rawRepresentation)
        }
        state = .done
        return SecureBytes.concatenating(parts)
    }

    /// Restores a round state exported by ``exportState()``, for the same input.
    /// - Throws: `invalidEncoding` for bytes that do not parse or belong to another input; as
    ///   ``init(_:random:)`` for stale or discarded setups.
    package init(_ input: Input, state bytes: SecureBytes) throws {
        material = try Self.material(for: input)
        self.input = input
        signingKey = try input.tweak.isZero ? input.publicKey : input.publicKey + Point(generatorTimes: input.tweak)
        var wire = ECDSAWire(bytes.revealedBytes(), what: "ECDSA round state")
        guard try wire.byte() == Self.stateVersion else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA round state has an unknown version")
        }
        let phase = try wire.byte()
        guard (1...3).contains(phase), try wire.take(32) == Self.inputTag(input) else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA round state is of another session or phase")
        }
        nonce = try wire.take(32)
        instanceKey = try wire.scalar()
        // A session never draws r_i = 0; stored bytes holding it do not parse (not `invalidScalar` from k·G).
        guard !instanceKey.isZero else {
            throw ShareCryptoError(.invalidEncoding, "this ECDSA round state's instance key is zero")
        }
        instancePoint = try Point(generatorTimes: instanceKey)
        phi = try wire.scalar()
        salt = try wire.take(32)
        let peers = input.peers.map(\.index).sorted()
        for peer in peers {
            let chi = try wire.scalar()
            let choices = try wire.secret(OTExtension.columnByteCount)
            let rows = try wire.secret(OTExtension.rowCount * 32)
            bob[peer] = RandomVectorOLE.BobState(choices: choices, rows: rows, chi: chi)
            masks[peer] = (try wire.scalar(), try wire.scalar())
        }
        switch phase {
        case 1: state = .round2(peers: [:])
        case 2:
            let sid = try wire.take(32)
            let sk = try wire.scalar()
            var shares = [Int: (Scalar, Scalar)]()
            for peer in peers {
                round1Peers[peer] = PeerRound1(
                    nonce: try wire.take(32), commitment: try wire.take(32), extensionMessage: [])
                shares[peer] = (try wire.scalar(), try wire.scalar())
            }
            state = .round3(sid: sid, sk: sk, aliceShares: shares)
        default:
            let bigR = try wire.point()
            state = .finish(bigR: bigR, r: try wire.scalar())
        }
        try wire.finish()
    }

    private static func commitment(index: Int, nonce: [UInt8], point: Point, salt: [UInt8]) -> [UInt8] {
        ECDSAHash.digest(
            "commit", [.bytes([UInt8(index)]), .bytes(nonce), .bytes(point.rawRepresentation), .bytes(salt)])
    }

    private static func extensionId(bob: ECDSAPartyBinding, alice: ECDSAPartyBinding, nonce: [UInt8]) -> [UInt8] {
        ECDSAHash.digest(
            "ote/id", [.bytes(ECDSAPartyBinding.directionContext(receiver: bob, sender: alice)), .bytes(nonce)])
    }

    private static func directionSession(_ sid: [UInt8], bob: Int, alice: Int) -> [UInt8] {
        ECDSAHash.digest("session/direction", [.bytes(sid), .bytes([UInt8(bob), UInt8(alice)])])
    }

    /// Round 1: `nonce (32) || commitment to R_i (32) || OT-extension message`, one per peer.
    /// - Throws: `nonceReused` once the session has moved on.
    package func round1Messages() throws -> [Int: [UInt8]] {
        guard case .round1 = state else { throw Self.reused() }
        state = .round2(peers: [:])
        return round1
    }

    private static func reused() -> ShareCryptoError {
        ShareCryptoError(.nonceReused, "this ECDSA round state was already used; a session signs once, start a new one")
    }

    /// Aborts: discards the setup with `peer` (or with every peer), ends the session, returns the error.
    private func abort(_ error: ShareCryptoError) -> ShareCryptoError {
        state = .done
        let culprit = error.code == .ecdsaCheckFailed || error.code == .invalidEncoding ? error.party : nil
        if let culprit, let setup = input.setups[culprit] {
            setup.discard()
        } else {
            for setup in input.setups.values { setup.discard() }
        }
        return error.code == .invalidEncoding
            ? ShareCryptoError(.ecdsaCheckFailed, error.reason, party: error.party) : error
    }

    private func received(_ messages: [Int: [UInt8]], round: Int) throws -> [Int: [UInt8]] {
        let expected = Set(input.peers.map(\.index))
        guard Set(messages.keys) == expected else {
            throw ShareCryptoError(
                .invalidParameters, "round \(round) needs one message from each of \(expected.sorted())")
        }
        return messages
    }

    /// Round 2: after everyone's round 1, this party's multiplication replies and its opening.
    /// - Parameter messages: Round-1 message from each peer, by index.
    /// - Returns: `R_i (33) || salt (32) || pk_i (33) || ψ (32) || Γ^u (33) || Γ^v (33) || reply`, per peer.
    package func round2(_ messages: [Int: [UInt8]]) throws -> [Int: [UInt8]] {
        guard case .round2 = state else { throw Self.reused() }
        state = .done
        let messages = try received(messages, round: 1)
        do {
            var peers = [Int: PeerRound1]()
            for (index, message) in messages {
                do {
                    let parsed = try ECDSAMessage.SigningRound1(message, from: index)
                    peers[index] = PeerRound1(
                        nonce: parsed.nonce, commitment: parsed.commitment, extensionMessage: parsed.extensionMessage)
                } catch {
                    throw ShareCryptoError(
                        .ecdsaCheckFailed, "round 1 from party \(index) does not parse", party: index)
                }
            }
            var nonces = peers.mapValues(\.nonce)
            nonces[input.own.index] = nonce
            let sid = ECDSAHash.digest(
                "session",
                [
                    .bytes(input.publicKey.rawRepresentation), .bytes(input.tweak.rawRepresentation.revealedBytes()),
                    .bytes(input.digest),
                ]
                    + signers.flatMap { [HashInput.bytes([UInt8($0)]), .bytes(nonces[$0]!)] })
            let sk = try additiveShare(sid: sid)
            let pk = try Point(generatorTimes: sk)
            var replies = [Int: [UInt8]]()
            var aliceShares = [Int: (Scalar, Scalar)]()
            for peer in input.peers.sorted(by: { $0.index < $1.index }) {
                let keys = material[peer.index]!
                let id = Self.extensionId(bob: peer, alice: input.own, nonce: peers[peer.index]!.nonce)
                let (shares, reply) = try RandomVectorOLE.alice(
                    delta: keys.delta, keys: keys.senderKeys, id: id,
                    session: Self.directionSession(sid, bob: peer.index, alice: input.own.index),
                    bobMessage: peers[peer.index]!.extensionMessage, inputs: (instanceKey, sk),
                    masks: masks[peer.index]!,
                    peer: peer.index)
                aliceShares[peer.index] = shares
                let psi = phi - bob[peer.index]!.chi
                let gammaU = try Point(generatorTimes: shares.0)
                let gammaV = try Point(generatorTimes: shares.1)
                replies[peer.index] =
                    instancePoint.rawRepresentation + salt + pk.rawRepresentation
                    + psi.rawRepresentation.revealedBytes()
                    + gammaU.rawRepresentation + gammaV.rawRepresentation + reply
            }
            state = .round3(sid: sid, sk: sk, aliceShares: aliceShares)
            round1Peers = peers
            return replies
        } catch let error as ShareCryptoError { throw abort(error) }
    }

    private var round1Peers: [Int: PeerRound1] = [:]

    /// `sk_i = λ_i·x_i + ζ_i (+ t for the lowest-indexed signer)`.
    private func additiveShare(sid: [UInt8]) throws -> Scalar {
        let own = input.own.index
        var lambda = Scalar(1, curve: .secp256k1)
        var zeta = Scalar(0, curve: .secp256k1)
        for peer in input.peers {
            let m = Scalar(UInt64(peer.index), curve: .secp256k1)
            lambda = lambda * m * (try (m - Scalar(UInt64(own), curve: .secp256k1)).inverted())
            let mask = ECDSAHash.scalar("zero-share", [.secret(material[peer.index]!.zeroSeed), .bytes(sid)])
            zeta = own < peer.index ? zeta + mask : zeta - mask
        }
        let share = lambda * input.share + zeta
        return own == signers[0] ? share + input.tweak : share
    }

    /// Round 3: checks every peer's round 2 and broadcasts `u_i (32) || w_i (32)`.
    /// - Parameter messages: Round-2 message from each peer, by index.
    /// - Throws: `ecdsaCheckFailed` naming the peer whose opening, multiplication or consistency check
    ///   fails (its setup is discarded), or no party when the public shares do not add up to the key.
    package func round3(_ messages: [Int: [UInt8]]) throws -> [UInt8] {
        guard case .round3(let sid, let sk, let aliceShares) = state else { throw Self.reused() }
        state = .done
        let messages = try received(messages, round: 2)
        do {
            var bigR = [instancePoint]
            var publicShares = [try Point(generatorTimes: sk)]
            var psiSum = phi
            var uSum = Scalar(0, curve: .secp256k1)
            var vSum = Scalar(0, curve: .secp256k1)
            for peer in input.peers.map(\.index).sorted() {
                let fail = { (what: String) in
                    ShareCryptoError(.ecdsaCheckFailed, "party \(peer): \(what)", party: peer)
                }
                let message: ECDSAMessage.SigningRound2
                do { message = try ECDSAMessage.SigningRound2(messages[peer]!, from: peer) } catch {
                    throw fail("round 2 does not parse")
                }
                let (point, salt, pk, psi, gammaU, gammaV, reply) = (
                    message.point, message.salt, message.publicShare, message.psi, message.gammaU, message.gammaV,
                    message.reply
                )
                guard
                    constantTimeEquals(
                        Self.commitment(index: peer, nonce: round1Peers[peer]!.nonce, point: point, salt: salt),
                        round1Peers[peer]!.commitment)
                else {
                    throw fail("R does not open its round-1 commitment")
                }
                let state = bob[peer]!
                let (du, dv): (Scalar, Scalar)
                do {
                    (du, dv) = try RandomVectorOLE.bobFinish(
                        state: state, session: Self.directionSession(sid, bob: input.own.index, alice: peer),
                        reply: reply, peer: peer)
                } catch let error as ShareCryptoError where error.code == .invalidEncoding {
                    throw fail(error.reason)
                }
                // DKLs23 round-3 check, as corrected: χ·R_j − d^u·G = Γ^u_j and χ·pk_j − d^v·G = Γ^v_j.
                guard
                    Point.sumAllowingIdentity([
                        point.multipliedAllowingIdentity(by: state.chi),
                        Point.generatorTimesAllowingIdentity(du)?.negated,
                    ]) == gammaU
                else {
                    throw fail("the nonce multiplication is inconsistent with R_j")
                }
                guard
                    Point.sumAllowingIdentity([
                        pk.multipliedAllowingIdentity(by: state.chi), Point.generatorTimesAllowingIdentity(dv)?.negated,
                    ]) == gammaV
                else {
                    throw fail("the key multiplication is inconsistent with pk_j")
                }
                bigR.append(point)
                publicShares.append(pk)
                psiSum = psiSum + psi
                uSum = uSum + aliceShares[peer]!.0 + du
                vSum = vSum + aliceShares[peer]!.1 + dv
            }
            guard Point.sumAllowingIdentity(publicShares) == signingKey else {
                throw ShareCryptoError(.ecdsaCheckFailed, "the signers' public shares do not add up to the signing key")
            }
            guard let total = Point.sumAllowingIdentity(bigR) else {
                throw ShareCryptoError(.ecdsaCheckFailed, "the signers' nonce points add up to the identity")
            }
            let x = Array(total.rawRepresentation.dropFirst())
            guard let r = try? Scalar(rawRepresentation: x, curve: .secp256k1) else {
                state = .done
                throw ShareCryptoError(
                    .ecdsaRestart,
                    "x(R) ≥ n (odds about 2^-128): sign again with fresh seeds; the pair setups stay valid")
            }
            let u = instanceKey * psiSum + uSum
            let v = sk * psiSum + vSum
            let w =
                Scalar(reducingBigEndian: input.digest.withUnsafeBytes { SecureBytes(copying: $0) }, curve: .secp256k1)
                * phi + r * v
            state = .finish(bigR: total, r: r)
            return u.rawRepresentation.revealedBytes() + w.rawRepresentation.revealedBytes()
        } catch let error as ShareCryptoError {
            if error.code == .ecdsaRestart { throw error }
            throw abort(error)
        }
    }

    /// The signature from every signer's round-3 broadcast (this party's own included), verified.
    /// - Parameter broadcasts: `u_j || w_j` by index, for every signer.
    /// - Returns: The low-s signature with its recovery id.
    /// - Throws: `ecdsaCheckFailed` (no party: the protocol cannot tell who) when the result does not verify.
    package func finish(_ broadcasts: [Int: [UInt8]]) throws -> ECDSASignature {
        guard case .finish(let bigR, let r) = state else { throw Self.reused() }
        state = .done
        guard Set(broadcasts.keys) == Set(signers) else {
            throw ShareCryptoError(
                .invalidParameters, "the signature needs the round-3 broadcast of each of \(signers)")
        }
        do {
            var u = Scalar(0, curve: .secp256k1)
            var w = Scalar(0, curve: .secp256k1)
            for (index, bytes) in broadcasts {
                do {
                    let message = try ECDSAMessage.SigningRound3(bytes, from: index)
                    u = u + message.u
                    w = w + message.w
                } catch {
                    throw ShareCryptoError(
                        .ecdsaCheckFailed, "round 3 from party \(index) does not parse", party: index)
                }
            }
            guard !u.isZero else { throw ShareCryptoError(.ecdsaCheckFailed, "the round-3 values add up to zero") }
            let s = w * (try u.inverted())
            let signature = try ECDSASignature(
                r: r.rawRepresentation.revealedBytes(), s: s.rawRepresentation.revealedBytes(),
                recoveryId: bigR.rawRepresentation[0] & 1)
            guard signature.isValid(digest: input.digest, publicKey: signingKey) else {
                throw ShareCryptoError(.ecdsaCheckFailed, "the combined signature does not verify")
            }
            return signature
        } catch let error as ShareCryptoError { throw abort(error) }
    }
}
