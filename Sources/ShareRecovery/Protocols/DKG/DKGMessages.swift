public import ShareCrypto

/// What party i broadcasts in round 1 of the DKG (docs/formats.md §10 step 1): its commitments
/// C_{i,0} … C_{i,t−1} and the proof of knowledge of a_{i,0}.
public struct DKGRound1Message: Sendable, Equatable {
    /// i.
    public let sender: Int
    /// C_{i,k} = a_{i,k}·G, k = 0…t−1.
    public let commitments: [Point]
    /// (R_i, μ_i).
    public let proof: DKGProof

    /// Assembles a message (e.g. one received over the network); ``DKGParty/receive(round1:)`` checks it.
    public init(sender: Int, commitments: [Point], proof: DKGProof) {
        self.sender = sender
        self.commitments = commitments
        self.proof = proof
    }
}

/// What party i sends privately to party j in round 2 (docs/formats.md §10 step 2): the sub-share f_i(j).
/// It is secret: it travels only over a confidential channel and is never logged.
public struct DKGRound2Message: Sendable, CustomStringConvertible {
    /// i.
    public let sender: Int
    /// j.
    public let receiver: Int
    /// f_i(j).
    public let subShare: Scalar

    /// Assembles a message; the receiver's ``DKGRound2State/finish(round2:)`` checks it.
    public init(sender: Int, receiver: Int, subShare: Scalar) {
        self.sender = sender
        self.receiver = receiver
        self.subShare = subShare
    }

    public var description: String { "DKGRound2Message(\(sender) → \(receiver), sub-share redacted)" }
}
