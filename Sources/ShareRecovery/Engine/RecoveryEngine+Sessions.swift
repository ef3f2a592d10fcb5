import ShareCrypto

/// The custodian session of one backup, recovery or refresh, from open to its end, so that it ends the same
/// way whether the process lives or is cut off:
///
/// 1. the session's id is recorded in the device's store right after open (``PendingSession``);
/// 2. a failure before the confirm abandons it (``Custodian/settleSession(_:)``);
/// 3. a confirm whose answer is lost is settled: the custodian says whether it landed, and a
///    recovery's staged share is promoted or discarded to match;
/// 4. the record is cleared only once the session has ended at the custodian; a device that starts
///    with a record left settles it first (``RecoveryEngine/resumeInterruptedOperation()``).
///
/// So the device and the custodian end on the same generation, whatever the moment of a crash.
extension RecoveryEngine {
    /// How a confirm ended.
    enum ConfirmOutcome {
        /// Confirmed, directly or as the custodian said when asked after a lost answer.
        case confirmed
        /// Not confirmed, and abandoned now: the record is cleared.
        case abandoned(any Error)
        /// Neither the confirm nor the question reached an answer: the record stays for the next start.
        case unknown(any Error)
    }

    /// Settles an operation a previous run of this device left unfinished, before anything else.
    ///
    /// Every backup, recovery and method change calls this first, so an app need not; call it at
    /// start-up to finish (or roll back) a recovery as soon as the network allows.
    /// - Returns: What was done.
    /// - Throws: ``ShareRecoveryError`` `operationInProgress` while another operation of the wallet
    ///   runs; the store's errors; the custodian's (e.g. a `TransportError`), in which case nothing
    ///   changed and the next call asks again.
    @discardableResult
    public func resumeInterruptedOperation() async throws -> ResumeOutcome {
        try await operation("resume") { try await performResume() }
    }

    @discardableResult
    func performResume() async throws -> ResumeOutcome {
        let store = configuration.shareStore
        guard let pending = try await store.pendingSession() else { return .nothingToResume }
        let settlement = try await configuration.custodian.settleSession(pending)
        let outcome: ResumeOutcome
        switch (pending.purpose, settlement) {
        case (.recovery, .confirmed), (.refresh, .confirmed):
            // Nothing staged means the promotion happened before the cut: the new share is current.
            if try await store.stagedShare() != nil { try await store.promoteStaged() }
            outcome = .completed(pending.purpose)
        case (.recovery, .abandoned), (.refresh, .abandoned):
            try await store.discardStaged()
            outcome = .rolledBack(pending.purpose)
        case (.backup, .confirmed): outcome = .completed(.backup)
        case (.backup, .abandoned): outcome = .rolledBack(.backup)
        }
        try await store.clearPendingSession()
        return outcome
    }

    /// Records a session id of our choosing, opens the session under it, and runs the client's role
    /// on the custodian's offer (``ResharingClient``: the plan checked against our own share, our
    /// dealing, our new share). The record comes first, so a cut at any moment leaves an id the next
    /// start can settle (a session that never opened settles as abandoned).
    func reshareWithCustodian(
        _ request: ResharingSessionRequest, ownShare: ShareRecord, newKind: SetKind
    ) async throws -> (sessionId: String, dealt: ResharingClient.Dealt) {
        let purpose: PendingSession.Purpose =
            switch request.purpose {
            case .backup: .backup
            case .recovery: .recovery
            case .refresh: .refresh
            }
        let chosen = PendingSession(sessionId: Hex.encode(configuration.random.bytes(count: 16)), purpose: purpose)
        try await configuration.shareStore.recordPendingSession(chosen)
        let offer = try await abandoningOnFailure(chosen) {
            try await configuration.custodian.openSession(
                ResharingSessionRequest(
                    clientId: request.clientId, purpose: request.purpose, clientShare: request.clientShare,
                    sessionId: chosen.sessionId))
        }
        // A custodian may choose its own id; then that one is on record.
        let pending = PendingSession(sessionId: offer.sessionId, purpose: purpose)
        let dealt = try await abandoningOnFailure(pending) {
            if pending != chosen { try await configuration.shareStore.recordPendingSession(pending) }
            return try ResharingClient.accept(
                offer: offer, ownShare: ownShare, newKind: newKind, using: configuration.random)
        }
        return (offer.sessionId, dealt)
    }

    /// Runs `body`; if it fails, anything staged is discarded and the session abandoned (its record
    /// cleared once the custodian has answered) before the error propagates.
    /// (The result is captured first: awaiting inside a `catch` crashes the 6.3 optimizer.)
    func abandoningOnFailure<T>(_ pending: PendingSession, _ body: () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        if case .failure = outcome { await abandon(pending) }
        return try outcome.get()
    }

    /// Discards anything staged and abandons the session; if the custodian cannot be reached, the
    /// record stays, and the next start (or operation) settles it.
    func abandon(_ pending: PendingSession) async {
        let store = configuration.shareStore
        if pending.purpose.stagesShare { try? await store.discardStaged() }
        if (try? await configuration.custodian.settleSession(pending)) != nil {
            try? await store.clearPendingSession()
        }
    }

    /// Durably stages a new share. A stage that failed after its rename (the directory fsync) left a
    /// share the custodian never confirmed; it is discarded before the error propagates.
    func stage(_ share: ShareRecord) async throws {
        let store = configuration.shareStore
        let staged: Result<Void, any Error>
        do {
            try await store.stage(share)
            staged = .success(())
        } catch {
            staged = .failure(error)
        }
        if case .failure = staged { try? await store.discardStaged() }
        try staged.get()
    }

    /// Confirms; when the confirm fails (its answer lost, or refused), asks the custodian what became
    /// of the session, which also ends it if it had not landed.
    func confirmSettling(_ pending: PendingSession) async -> ConfirmOutcome {
        let confirmed: Result<Void, any Error>
        do {
            try RecoveryPipeline.checkCancellation()
            try await configuration.custodian.confirmSession(id: pending.sessionId)
            confirmed = .success(())
        } catch {
            confirmed = .failure(error)
        }
        guard case .failure(let error) = confirmed else { return .confirmed }
        let settled: Result<SessionSettlement, any Error>
        do {
            settled = .success(try await configuration.custodian.settleSession(pending))
        } catch {
            settled = .failure(error)
        }
        switch settled {
        case .success(.confirmed): return .confirmed
        case .success(.abandoned):
            try? await configuration.shareStore.clearPendingSession()
            return .abandoned(error)
        case .failure: return .unknown(error)
        }
    }

    /// A staged recovery or refresh share, confirmed and promoted; or discarded when the custodian abandoned the
    /// session; or left staged, with its record, when the custodian cannot say (the next start settles it).
    func confirmAndPromote(_ pending: PendingSession) async throws {
        let store = configuration.shareStore
        switch await confirmSettling(pending) {
        case .confirmed:
            try await store.promoteStaged()
            try await store.clearPendingSession()
        case .abandoned(let error):
            try? await store.discardStaged()
            throw error
        case .unknown(let error):
            throw error
        }
    }
}
