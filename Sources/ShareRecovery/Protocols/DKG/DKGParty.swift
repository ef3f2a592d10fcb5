public import ShareCrypto

/// Party i's role in the distributed key generation of docs/formats.md §10, after round 1.
///
/// The role is a value that takes messages and returns messages and its next state; it knows
/// nothing of transport or storage, so the same code runs all parties in one process
/// (``DistributedKeyGeneration``) or one party per device and server.
///
/// 1. `DKGParty(parameters:partyIndex:)` draws f_i and makes ``round1Message`` (broadcast it).
/// 2. ``receive(round1:)`` checks every other party's broadcast and returns the round-2 state with
///    the private sub-shares f_i(j) to send.
/// 3. ``DKGRound2State/finish(round2:)`` checks the sub-shares received and returns the party's
///    signing share, a generation-0 §4 record.
///
/// The polynomial is secret and lives only in this value (its scalars are wiped when it goes away).
public struct DKGParty: Sendable, CustomStringConvertible {
    /// The agreed parameters.
    public let parameters: DKGParameters
    /// i.
    public let partyIndex: Int
    /// The broadcast of round 1.
    public let round1Message: DKGRound1Message
    /// f_i, secret.
    private let polynomial: Polynomial

    /// Round 1 with a fresh random polynomial (non-zero coefficients) and proof nonce.
    /// - Parameters:
    ///   - parameters: The agreed parameters.
    ///   - partyIndex: i, 1…n.
    ///   - random: The random source (the system CSPRNG in production).
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for an index outside 1…n.
    public init(parameters: DKGParameters, partyIndex: Int, using random: some RandomSource = SystemRandom())
        throws(ShareRecoveryError)
    {
        // Scalar.random never returns zero, so every C_{i,k} is a valid point.
        let coefficients = (0..<parameters.threshold).map { _ in Scalar.random(on: parameters.curve, using: random) }
        try self.init(
            parameters: parameters, partyIndex: partyIndex, coefficients: coefficients,
            proofNonce: Scalar.random(on: parameters.curve, using: random))
    }

    /// Round 1 with an explicit polynomial and proof nonce (the dkg@1 vectors fix them).
    /// - Parameters:
    ///   - parameters: The agreed parameters.
    ///   - partyIndex: i, 1…n.
    ///   - coefficients: a_{i,0} … a_{i,t−1}, t non-zero scalars of the curve.
    ///   - proofNonce: k, non-zero.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for an index outside 1…n or a wrong
    ///   coefficient count; ``ShareRecoveryError/Code/invalidScalar`` for a zero coefficient or nonce.
    public init(parameters: DKGParameters, partyIndex: Int, coefficients: [Scalar], proofNonce: Scalar)
        throws(ShareRecoveryError)
    {
        guard parameters.partyIndices.contains(partyIndex) else {
            throw ShareRecoveryError(
                .invalidParameters, "party index must be 1…\(parameters.parties), got \(partyIndex)")
        }
        guard coefficients.count == parameters.threshold, coefficients.allSatisfy({ $0.curve == parameters.curve }),
            proofNonce.curve == parameters.curve
        else {
            throw ShareRecoveryError(
                .invalidParameters,
                "party \(partyIndex) needs \(parameters.threshold) coefficients on \(parameters.curve)")
        }
        guard coefficients.allSatisfy({ !$0.isZero }), !proofNonce.isZero else {
            throw ShareRecoveryError(.invalidScalar, "a DKG coefficient or proof nonce is zero")
        }
        let polynomial = try mappingCryptoErrors { try Polynomial(coefficients: coefficients) }
        let commitments = try mappingCryptoErrors { try polynomial.commitments() }
        let proof = try mappingCryptoErrors {
            try DKGProof.prove(secret: coefficients[0], index: partyIndex, nonce: proofNonce)
        }
        self.parameters = parameters
        self.partyIndex = partyIndex
        self.polynomial = polynomial
        round1Message = DKGRound1Message(sender: partyIndex, commitments: commitments, proof: proof)
    }

    /// Round 2: checks every other party's broadcast and deals this party's sub-shares.
    /// - Parameter messages: One round-1 message from every other party (this party's own may be
    ///   included; it must equal ``round1Message``).
    /// - Returns: The state to finish with, and f_i(j) for every other party j, to send privately.
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for a missing, duplicate or misshapen
    ///   message (naming its sender); `dkgProofFailed` naming the first sender, ascending, whose
    ///   proof does not verify (§10 step 3).
    public func receive(round1 messages: [DKGRound1Message]) throws(ShareRecoveryError)
        -> (state: DKGRound2State, messages: [DKGRound2Message])
    {
        var bySender: [Int: DKGRound1Message] = [partyIndex: round1Message]
        for message in messages {
            if message.sender == partyIndex {
                guard message == round1Message else {
                    throw ShareRecoveryError(
                        .invalidParameters, "a round-1 message claims to come from this party (\(partyIndex))",
                        party: partyIndex)
                }
                continue
            }
            guard parameters.partyIndices.contains(message.sender), bySender[message.sender] == nil else {
                throw ShareRecoveryError(
                    .invalidParameters,
                    "round-1 message from party \(message.sender): not a party of 1…\(parameters.parties), or sent twice",
                    party: message.sender)
            }
            bySender[message.sender] = message
        }
        var ordered: [DKGRound1Message] = []
        for sender in parameters.partyIndices {
            guard let message = bySender[sender] else {
                throw ShareRecoveryError(.invalidParameters, "no round-1 message from party \(sender)", party: sender)
            }
            guard message.commitments.count == parameters.threshold,
                message.commitments.allSatisfy({ $0.curve == parameters.curve }),
                message.proof.commitment.curve == parameters.curve
            else {
                throw ShareRecoveryError(
                    .invalidParameters,
                    "party \(sender) sent \(message.commitments.count) commitments, expected \(parameters.threshold) on \(parameters.curve)",
                    party: sender)
            }
            // §10 step 3: μ_i·G == R_i + c_i·C_{i,0}. Our own proof needs no check.
            guard sender == partyIndex || message.proof.verify(index: sender, publicCommitment: message.commitments[0])
            else {
                throw ShareRecoveryError(
                    .dkgProofFailed, "party \(sender)'s proof of knowledge does not verify", party: sender)
            }
            ordered.append(message)
        }
        let outgoing = parameters.partyIndices.filter { $0 != partyIndex }.map { receiver in
            DKGRound2Message(sender: partyIndex, receiver: receiver, subShare: polynomial.evaluate(atIndex: receiver))
        }
        let state = DKGRound2State(
            parameters: parameters, partyIndex: partyIndex, round1: ordered,
            ownSubShare: polynomial.evaluate(atIndex: partyIndex))
        return (state, outgoing)
    }

    public var description: String {
        "DKGParty(\(parameters.walletId), party \(partyIndex) of \(parameters.parties), polynomial redacted)"
    }
}

/// Party j between rounds 2 and 3: every broadcast checked, its own sub-share f_j(j) kept. This is
/// the state a server seals at rest while it waits for the other parties' sub-shares
/// (``serialized()``).
public struct DKGRound2State: Sendable, CustomStringConvertible {
    /// The agreed parameters.
    public let parameters: DKGParameters
    /// j.
    public let partyIndex: Int
    /// Every party's round-1 broadcast, checked, ascending by sender.
    public let round1: [DKGRound1Message]
    /// f_j(j), secret.
    let ownSubShare: Scalar

    init(parameters: DKGParameters, partyIndex: Int, round1: [DKGRound1Message], ownSubShare: Scalar) {
        self.parameters = parameters
        self.partyIndex = partyIndex
        self.round1 = round1
        self.ownSubShare = ownSubShare
    }

    /// Round 3 (§10 steps 3–4): checks every sub-share received and combines the signing share.
    /// - Parameter messages: f_i(j) from every other party i (messages to other receivers are refused).
    /// - Returns: Party j's signing share: generation 0, the §10 setId, with its secret.
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for a missing, duplicate or misaddressed
    ///   message; `subShareCheckFailed` naming the first sender, ascending, whose sub-share does not
    ///   match its commitments; `invalidPoint` for an identity A_k; `invalidScalar` for a zero x_j.
    public func finish(round2 messages: [DKGRound2Message]) throws(ShareRecoveryError) -> ShareRecord {
        let curve = parameters.curve
        var bySender: [Int: Scalar] = [:]
        for message in messages {
            guard message.receiver == partyIndex, message.sender != partyIndex,
                parameters.partyIndices.contains(message.sender),
                bySender[message.sender] == nil
            else {
                throw ShareRecoveryError(
                    .invalidParameters,
                    "round-2 message \(message.sender) → \(message.receiver) is not for party \(partyIndex) or came twice",
                    party: message.sender)
            }
            bySender[message.sender] = message.subShare
        }
        // §10 step 3: f_i(j)·G == Σ_k j^k·C_{i,k} for the senders, ascending, before the first that
        // sent nothing, naming the first that fails.
        let senders = round1.filter { $0.sender != partyIndex }
        let received = senders.prefix { bySender[$0.sender] != nil }
        let claims = received.map { SubShareClaim(subShare: bySender[$0.sender]!, commitments: $0.commitments) }
        if let position = FeldmanBatch.firstFailure(index: partyIndex, claims: claims) {
            let sender = received[position].sender
            throw ShareRecoveryError(
                .subShareCheckFailed,
                "party \(sender)'s sub-share for party \(partyIndex) does not match its commitments",
                party: sender)
        }
        if received.count < senders.count {
            let sender = senders[received.count].sender
            throw ShareRecoveryError(.invalidParameters, "no sub-share from party \(sender)", party: sender)
        }
        let secret = received.reduce(ownSubShare) { $0 + bySender[$1.sender]! }
        let commitments = try (0..<parameters.threshold).map { (k) throws(ShareRecoveryError) -> Point in
            do {
                return try Point.sum(round1.map { $0.commitments[k] })
            } catch {
                throw ShareRecoveryError(.invalidPoint, "the group commitment A_\(k) is the identity")
            }
        }
        guard !secret.isZero else { throw ShareRecoveryError(.invalidScalar, "the combined signing share is zero") }
        // x_j·G == X_j follows from the sub-share checks and A_k = Σ_i C_{i,k}:
        // x_j·G = Σ_i f_i(j)·G = Σ_i Σ_k j^k·C_{i,k} = Σ_k j^k·A_k = X_j (our own f_j(j) is exact).
        return try ShareRecord(
            verified: (), walletId: parameters.walletId, curve: curve, kind: .signing, threshold: parameters.threshold,
            parties: parameters.parties, partyIndex: partyIndex, generation: 0,
            setId: parameters.setId(commitments: commitments), secret: secret, commitments: commitments)
    }

    public var description: String {
        "DKGRound2State(\(parameters.walletId), party \(partyIndex), own sub-share redacted)"
    }
}

/// All n parties of a DKG in one process, through the same messages a network would carry: the CLI's
/// `keygen --dkg`, demos and tests. No value ever holds the whole key.
public enum DistributedKeyGeneration {
    /// Runs every party.
    /// - Parameters:
    ///   - parameters: The agreed parameters.
    ///   - random: The random source.
    /// - Returns: The n signing shares, party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any party's checks.
    public static func run(parameters: DKGParameters, using random: some RandomSource = SystemRandom())
        throws(ShareRecoveryError)
        -> [ShareRecord]
    {
        let parties = try parameters.partyIndices.map { (index) throws(ShareRecoveryError) in
            try DKGParty(parameters: parameters, partyIndex: index, using: random)
        }
        return try run(parties: parties)
    }

    /// Runs parties whose round 1 is already made (vectors fix their polynomials).
    /// - Parameter parties: One party per index 1…n, same parameters.
    /// - Returns: The n signing shares, party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any party's checks.
    public static func run(parties: [DKGParty]) throws(ShareRecoveryError) -> [ShareRecord] {
        let broadcasts = parties.map(\.round1Message)
        let rounds = try parties.map { (party) throws(ShareRecoveryError) in try party.receive(round1: broadcasts) }
        let mail = rounds.flatMap(\.messages)
        return try rounds.map { (round) throws(ShareRecoveryError) in
            try round.state.finish(round2: mail.filter { $0.receiver == round.state.partyIndex })
        }
    }
}
