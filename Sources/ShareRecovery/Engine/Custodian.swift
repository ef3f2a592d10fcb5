public import ShareCrypto

/// What a client asks the custodian to reshare (docs/formats.md §3 with the custodian as co-dealer).
public struct ResharingSessionRequest: Sendable {
    /// Why the set is reshared.
    public enum Purpose: Sendable, Equatable {
        /// Signing set → a new backup set for a method.
        case backup(BackupMethod)
        /// Backup set of a method → a new signing set.
        case recovery(BackupMethod)
        /// Signing set → a new signing set of the same parties and threshold, one generation later
        /// (docs/formats.md §3, refresh): a share that leaked before signs nothing after.
        case refresh

        /// Whether the session's confirm replaces the custodian's signing set.
        public var replacesSigningSet: Bool {
            if case .backup = self { return false }
            return true
        }
    }

    /// The integrator's client (user) id.
    public let clientId: String
    /// Backup, recovery or refresh.
    public let purpose: Purpose
    /// The client's old share, as a public description: it names the set to reshare.
    public let clientShare: ShareRecord
    /// The session id the client chose, or `nil` to let the custodian choose. A client that records
    /// the id *before* asking can settle the session whatever the moment it is cut off
    /// (``Custodian/settleSession(_:)``); a custodian refuses an id it already knows.
    public let sessionId: String?

    /// Creates a request; the share is reduced to its public description.
    public init(clientId: String, purpose: Purpose, clientShare: ShareRecord, sessionId: String? = nil) {
        self.clientId = clientId
        self.purpose = purpose
        self.clientShare = clientShare.publicDescription
        self.sessionId = sessionId
    }
}

/// The custodian's answer to a session request: the plan and its own dealings.
public struct ResharingSessionOffer: Sendable {
    /// Identifies the session in later calls.
    public let sessionId: String
    /// The agreed plan.
    public let plan: ResharingPlan
    /// One dealing per custodian dealer, carrying only the client's sub-share.
    public let custodianDealings: [Dealing]

    /// Creates an offer.
    public init(sessionId: String, plan: ResharingPlan, custodianDealings: [Dealing]) {
        self.sessionId = sessionId
        self.plan = plan
        self.custodianDealings = custodianDealings
    }
}

/// What the custodian reports once it has received the client's dealing.
public struct ResharingSessionResult: Sendable {
    /// The new set's commitments as the custodian computed them; the client checks they equal its own.
    public let newCommitments: [Point]
    /// For a backup: the custodian backup shares (§6 JSON) of the new set, for the integrator to store.
    public let custodianBackupShares: [String]

    /// Creates a result.
    public init(newCommitments: [Point], custodianBackupShares: [String]) {
        self.newCommitments = newCommitments
        self.custodianBackupShares = custodianBackupShares
    }
}

/// The custodian's side of backup and recovery. Implementations: ``LocalCustodian`` in process,
/// and an HTTP client of the reference server's recovery endpoints.
public protocol Custodian: Sendable {
    /// Opens a resharing session: the custodian finds its shares of the old set (for a recovery,
    /// through its custodian share source and docs/formats.md §7 selection), fixes the plan, and deals.
    func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer

    /// Hands the custodian the client's dealing, with sub-shares for the custodian's new parties only.
    func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult

    /// The client has durably staged its new share: the custodian commits the new set and, for a
    /// recovery, drops the old signing set so a lost device's share is useless.
    ///
    /// Confirming a confirmed session succeeds and changes nothing, so a client whose answer was lost
    /// (a dropped connection, a gateway's 5xx) can send it again; the HTTP transport does.
    func confirmSession(id: String) async throws

    /// Abandons a session; nothing the custodian stores changes.
    func abortSession(id: String) async

    /// Ends a session its client lost track of (the device was cut off mid-operation): abandons it
    /// unless it was confirmed, in one step, so that no confirm can land after the answer. A client
    /// that knows nothing more than the ``PendingSession`` it recorded calls this; it needs no state
    /// from the process that opened the session.
    /// - Returns: ``SessionSettlement/confirmed`` when the session's new set is current at the
    ///   custodian, ``SessionSettlement/abandoned`` when it is not and now never will be.
    /// - Throws: when the custodian cannot be asked (the caller keeps its record and asks again later).
    func settleSession(_ session: PendingSession) async throws -> SessionSettlement
}

/// What became of a session its client lost track of (``Custodian/settleSession(_:)``).
public enum SessionSettlement: Sendable, Equatable {
    /// It was confirmed: its new set is current at the custodian.
    case confirmed
    /// It was not confirmed and never will be: abandoned now, or expired before.
    case abandoned
}
