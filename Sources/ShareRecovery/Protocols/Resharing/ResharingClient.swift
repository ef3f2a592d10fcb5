public import ShareCrypto

/// The client's side of a resharing session (docs/formats.md §3, backup and recovery) as values, the
/// counterpart of ``ResharingCustodian``: the custodian's offer → ``accept(offer:ownShare:newKind:using:)``
/// → ``Dealt`` (the client's dealing to send, and its new share) → ``Dealt/finish(result:)`` with the
/// custodian's result → the new share, checked against the custodian's view of the new set.
///
/// The client keeps ``Dealt`` in memory only, for the seconds between its two calls: a process cut
/// between them abandons the session (its id, in ``PendingSession``, is what the device keeps), and
/// the next attempt deals afresh, so no secret of an unfinished session is ever written. Transport,
/// storage and the order of the §8 statuses are the caller's (``RecoveryEngine``).
public enum ResharingClient {
    /// Checks that the custodian's offer reshares exactly the client's own set into the expected
    /// shape, deals the client's share (§3 step 1) and receives the client's new share from every
    /// dealing (steps 2–5).
    /// - Parameters:
    ///   - offer: The custodian's plan and dealings, each carrying only the client's sub-share.
    ///   - ownShare: The client's share of the old set (its signing share for a backup, its user
    ///     backup share for a recovery).
    ///   - newKind: `.backup` for a backup (same generation), `.signing` for a recovery (a later one).
    ///   - random: The source of the client's polynomial.
    /// - Returns: The dealing to send and the new share.
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for a plan of another set, kind, shape or
    ///   generation, and every code of ``ResharingDealer`` and ``ResharingReceiver`` (a custodian
    ///   dealing that fails its checks names the dealer).
    public static func accept(
        offer: ResharingSessionOffer, ownShare: ShareRecord, newKind: SetKind,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> Dealt {
        let plan = offer.plan
        // A backup keeps the generation; a recovery must move past the share it starts from.
        let generationFits =
            newKind == .backup ? plan.newGeneration == ownShare.generation : plan.newGeneration > ownShare.generation
        guard plan.oldSet.isSameSet(as: ownShare.publicDescription), plan.dealers.contains(ownShare.partyIndex),
            plan.newKind == newKind, generationFits, plan.newThreshold == ownShare.threshold,
            plan.newParties == ownShare.parties
        else {
            throw ShareRecoveryError(.invalidParameters, "the custodian proposed a plan for another set or shape")
        }
        let ownDealing = try ResharingDealer.deal(share: ownShare, plan: plan, using: random)
        let newShare = try ResharingReceiver.receive(
            partyIndex: ownShare.partyIndex, plan: plan, dealings: offer.custodianDealings + [ownDealing])
        // The sub-share for the client's own new party stays here: the custodian needs only its own.
        let outgoing = Dealing(
            dealerIndex: ownDealing.dealerIndex, commitments: ownDealing.commitments,
            subShares: ownDealing.subShares.filter { $0.key != ownShare.partyIndex })
        return Dealt(plan: plan, outgoingDealing: outgoing, newShare: newShare)
    }

    /// A session after the client dealt: what to send, and the client's new share (secret).
    public struct Dealt: Sendable, CustomStringConvertible {
        /// The agreed plan.
        public let plan: ResharingPlan
        /// The client's dealing as the custodian receives it: sub-shares for the custodian's parties only.
        public let outgoingDealing: Dealing
        /// The client's new share, checked against every dealing but not yet against the custodian's result.
        public let newShare: ShareRecord

        /// Checks the custodian's result: its commitments to the new set must be the client's own, so
        /// both hold shares of one polynomial (and so of one public key) before anything is stored.
        /// - Returns: ``newShare``.
        /// - Throws: ``ShareRecoveryError/Code/publicKeyMismatch`` when the custodian computed other
        ///   commitments.
        public func finish(result: ResharingSessionResult) throws(ShareRecoveryError) -> ShareRecord {
            guard result.newCommitments == newShare.commitments else {
                throw ShareRecoveryError(
                    .publicKeyMismatch, "the custodian computed other commitments for the new \(plan.newKind) set")
            }
            return newShare
        }

        public var description: String { "ResharingClient.Dealt(plan for set \(plan.newSetId), new share redacted)" }
    }
}
