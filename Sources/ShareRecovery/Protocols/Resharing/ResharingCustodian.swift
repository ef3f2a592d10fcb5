public import ShareCrypto

/// The custodian's side of a resharing session (docs/formats.md §3: backup, recovery and refresh) as values, one
/// per round: ``open(request:signingShares:candidates:custodianKey:using:)`` → ``Opened`` →
/// ``Opened/finish(clientDealing:custodianPublicKey:using:)`` → ``Finished`` (the answer to the
/// client) and its ``Finished/pending`` → ``Pending/confirm(currentSets:)`` → the signing set to make
/// current.
///
/// This is the one custodian implementation: ``LocalCustodian`` keeps ``Opened`` and ``Pending`` in
/// memory, the reference server seals their byte forms (`serialized()`, `init(serialized:)`) into
/// its session row. Neither adds a check of its own.
public enum ResharingCustodian {
    /// A session after open: the plan and the custodian's dealings, with the sub-shares for its own
    /// new parties (secret).
    public struct Opened: Sendable, CustomStringConvertible {
        /// Backup or recovery with the method, or refresh.
        public let purpose: ResharingSessionRequest.Purpose
        /// The agreed plan; its old set is the client's.
        public let plan: ResharingPlan
        /// One dealing per custodian dealer, with every new party's sub-share.
        public let dealings: [Dealing]
        /// For a recovery, the custodian's signing set when the session opened (`nil` when it held
        /// none), for a refresh the set refreshed: a confirm must find it unchanged, so of two
        /// sessions planned on one set only the first confirm wins.
        public let expectedSet: SetID?

        /// Restores an opened session a keeper stored.
        /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when the dealings do not fit the plan
        ///   (a dealer outside Q, the client's index, a sub-share missing for a custodian party).
        public init(
            purpose: ResharingSessionRequest.Purpose, plan: ResharingPlan, dealings: [Dealing], expectedSet: SetID?
        )
            throws(ShareRecoveryError)
        {
            let client = plan.oldSet.partyIndex
            let own = ResharingCustodian.ownParties(plan)
            guard dealings.map(\.dealerIndex) == plan.dealers.filter({ $0 != client }),
                dealings.allSatisfy({ dealing in own.allSatisfy { dealing.subShares[$0] != nil } })
            else {
                throw ShareRecoveryError(.invalidParameters, "the custodian's dealings do not fit the session's plan")
            }
            self.purpose = purpose
            self.plan = plan
            self.dealings = dealings
            self.expectedSet = expectedSet
        }

        /// The dealings as the client receives them: only its own sub-share of each.
        public var offeredDealings: [Dealing] {
            dealings.map { dealing in
                Dealing(
                    dealerIndex: dealing.dealerIndex, commitments: dealing.commitments,
                    subShares: dealing.subShares.filter { $0.key == plan.oldSet.partyIndex })
            }
        }

        /// Finish: checks the client's dealing with every other (§3 steps 2–5) and computes the
        /// custodian's new shares; for a backup also their custodian backup shares (§6).
        /// - Parameters:
        ///   - clientDealing: The client's dealing, with sub-shares for the custodian's parties.
        ///   - custodianPublicKey: The X25519 key backup shares are sealed to.
        ///   - random: The random source of the sealing.
        /// - Throws: ``ShareRecoveryError``: `dealerCheckFailed` for a dealing from another party than
        ///   the client, and every code of ``ResharingReceiver``.
        public func finish(
            clientDealing: Dealing, custodianPublicKey: [UInt8], using random: some RandomSource = SystemRandom()
        )
            throws(ShareRecoveryError) -> Finished
        {
            guard clientDealing.dealerIndex == plan.oldSet.partyIndex else {
                throw ShareRecoveryError(
                    .dealerCheckFailed, "the client's dealing must come from party \(plan.oldSet.partyIndex)")
            }
            let newShares = try ResharingReceiver.receive(
                partyIndices: ResharingCustodian.ownParties(plan), plan: plan, dealings: dealings + [clientDealing])
            var backupShares: [String] = []
            if case .backup(let method) = purpose {
                backupShares = try newShares.map { (share) throws(ShareRecoveryError) in
                    try CustodianBackupShare(
                        sealing: share, method: method, custodianPublicKey: custodianPublicKey, using: random
                    ).json
                }
            }
            return Finished(
                purpose: purpose, newShares: newShares, custodianBackupShares: backupShares, expectedSet: expectedSet)
        }

        public var description: String {
            "ResharingCustodian.Opened(\(purpose), plan for set \(plan.newSetId), sub-shares redacted)"
        }
    }

    /// A session after finish: the custodian's new shares, not yet current, and the answer to the client.
    public struct Finished: Sendable, CustomStringConvertible {
        /// Backup, recovery or refresh.
        public let purpose: ResharingSessionRequest.Purpose
        /// The custodian's new shares (parties other than the client's), with secrets.
        public let newShares: [ShareRecord]
        /// For a backup: the §6 JSON of each new share, for the integrator to store; empty for a recovery.
        public let custodianBackupShares: [String]
        /// As ``Opened/expectedSet``.
        public let expectedSet: SetID?

        /// What the custodian tells the client.
        public var result: ResharingSessionResult {
            ResharingSessionResult(
                newCommitments: newShares[0].commitments, custodianBackupShares: custodianBackupShares)
        }

        /// What the custodian keeps until the client confirms: for a backup nothing secret (its new
        /// shares left as ``custodianBackupShares``), for a recovery or a refresh the new signing set.
        public var pending: Pending {
            if purpose.replacesSigningSet {
                return Pending(purpose: purpose, signingSetToKeep: newShares, expectedSet: expectedSet)
            }
            return Pending(purpose: purpose, signingSetToKeep: nil, expectedSet: expectedSet)
        }

        public var description: String {
            "ResharingCustodian.Finished(\(purpose), \(newShares.count) new shares, secrets redacted)"
        }
    }

    /// A finished session waiting for the client's confirm.
    public struct Pending: Sendable, CustomStringConvertible {
        /// Backup, recovery or refresh.
        public let purpose: ResharingSessionRequest.Purpose
        /// For a recovery or a refresh the new signing set (the old one, with a lost or leaked
        /// share, becomes useless); `nil` for a backup, which changes no signing share.
        public let signingSetToKeep: [ShareRecord]?
        /// As ``Opened/expectedSet``.
        public let expectedSet: SetID?

        init(purpose: ResharingSessionRequest.Purpose, signingSetToKeep: [ShareRecord]?, expectedSet: SetID?) {
            self.purpose = purpose
            self.signingSetToKeep = signingSetToKeep
            self.expectedSet = expectedSet
        }

        /// Confirm: what the custodian makes current, after checking that its signing set is still the
        /// one the session was planned against (so of two recoveries planned on one set only the first
        /// confirm wins).
        /// - Parameter currentSets: The setIds of the custodian's current signing shares of the client.
        /// - Returns: The signing set that replaces the current one; `nil` for a backup.
        /// - Throws: ``ShareRecoveryError/Code/conflict`` when a recovery's set moved.
        public func confirm(currentSets: [SetID]) throws(ShareRecoveryError) -> [ShareRecord]? {
            guard let signingSetToKeep else { return nil }
            guard Set(currentSets) == Set(expectedSet.map { [$0] } ?? []) else {
                throw ShareRecoveryError(.conflict, "the custodian's signing set changed since this session opened")
            }
            return signingSetToKeep
        }

        public var description: String {
            "ResharingCustodian.Pending(\(purpose), \(signingSetToKeep?.count ?? 0) shares to keep, secrets redacted)"
        }
    }

    /// Open: finds the custodian's dealers, fixes the plan and deals (docs/formats.md §3 with the custodian
    /// as co-dealer).
    /// - Parameters:
    ///   - request: What the client asks to reshare.
    ///   - signingShares: The custodian's current signing shares of the client.
    ///   - candidates: For a recovery, the client's custodian backup shares (§6 JSON) from the
    ///     integrator, selected by §7; ignored for a backup.
    ///   - custodianKey: The custodian's X25519 key pair (opens sealed backup shares).
    ///   - random: The random source of the setId and the dealings.
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for a backup of a share that is not a
    ///   signing share (the caller's mistake) or a generation that cannot advance; `noMatchingShare`
    ///   when the custodian holds no signing share of the client's set (backup) or selection finds
    ///   none (recovery); `inconsistentShares` from selection.
    public static func open(
        request: ResharingSessionRequest, signingShares: [ShareRecord], candidates: [String],
        custodianKey: SealingKeyPair,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> Opened {
        let client = request.clientShare
        let dealers: [ShareRecord]
        let newKind: SetKind
        let newGeneration: UInt32
        var expectedSet: SetID?
        switch request.purpose {
        case .backup:
            dealers = try ownDealers(of: client, signingShares: signingShares, for: "a backup")
            newKind = .backup
            newGeneration = client.generation
        case .refresh:
            // The set dealt from is the current one (its shares are the custodian's), and stays so until
            // the confirm: of two refreshes, or a refresh and a recovery, only the first confirm wins.
            dealers = try ownDealers(of: client, signingShares: signingShares, for: "a refresh")
            newKind = .signing
            newGeneration = try nextGeneration(after: signingShares, client: client)
            expectedSet = client.setId
        case .recovery(let method):
            dealers = try CustodianShareSelector(custodianKey: custodianKey).select(
                for: client, method: method, candidates: candidates
            ).get()
            newKind = .signing
            newGeneration = try nextGeneration(after: signingShares, client: client)
            expectedSet = signingShares.first?.setId
        }
        var setId = SetID.random(using: random)
        while setId == client.setId { setId = SetID.random(using: random) }
        let plan = try ResharingPlan(
            oldSet: client, dealers: [client.partyIndex] + dealers.map(\.partyIndex), newThreshold: client.threshold,
            newParties: client.parties, newKind: newKind, newGeneration: newGeneration, newSetId: setId)
        let dealings = try dealers.map { (share) throws(ShareRecoveryError) in
            try ResharingDealer.deal(share: share, plan: plan, using: random)
        }
        return try Opened(purpose: request.purpose, plan: plan, dealings: dealings, expectedSet: expectedSet)
    }

    /// The custodian's dealers of a backup or refresh: its shares of the client's own signing set.
    private static func ownDealers(of client: ShareRecord, signingShares: [ShareRecord], for what: String)
        throws(ShareRecoveryError) -> [ShareRecord]
    {
        guard client.kind == .signing else {
            throw ShareRecoveryError(
                .invalidParameters, "\(what) reshares a signing share; clientShare is a \(client.kind) share")
        }
        let matching = signingShares.filter { $0.isSameSet(as: client) && $0.partyIndex != client.partyIndex }
        let dealers = Array(matching.sorted { $0.partyIndex < $1.partyIndex }.prefix(client.threshold - 1))
        guard dealers.count == client.threshold - 1 else {
            throw ShareRecoveryError(
                .noMatchingShare,
                "the custodian holds no signing share of this set (an older generation, or another device's set)")
        }
        return dealers
    }

    /// One more than the newest signing generation the custodian knows (docs/formats.md §3).
    private static func nextGeneration(after signingShares: [ShareRecord], client: ShareRecord)
        throws(ShareRecoveryError) -> UInt32
    {
        let newest = max(signingShares.map(\.generation).max() ?? client.generation, client.generation)
        guard newest < UInt32.max else {
            throw ShareRecoveryError(.invalidParameters, "the generation cannot be advanced")
        }
        return newest + 1
    }

    /// The custodian's parties of the new set: every index but the client's.
    public static func ownParties(_ plan: ResharingPlan) -> [Int] {
        (1...plan.newParties).filter { $0 != plan.oldSet.partyIndex }
    }
}
