public import ShareCrypto

/// The custodian in process: keeps the states of the one custodian role (``ResharingCustodian``) in
/// memory, with the custodian's signing shares and X25519 key, and fetches backup shares through a
/// ``CustodianShareSource``. For tests, demos and offline kits; the reference server seals the same
/// role's states into its database. Like the server, it opens one session per client at a time
/// (``ResharingCustodian/refuseWhileRunning(secondsLeft:)``); its sessions do not expire, they end by
/// confirm, abort or settle.
public actor LocalCustodian: Custodian {
    /// A session's state in the one custodian role, and who it is for.
    private enum Session {
        case opened(ResharingCustodian.Opened, clientId: String)
        case pending(ResharingCustodian.Pending, clientId: String)

        var clientId: String {
            switch self {
            case .opened(_, let clientId), .pending(_, let clientId): clientId
            }
        }
    }

    private let key: SealingKeyPair
    private let shareSource: any CustodianShareSource
    private let random: any RandomSource
    /// The custodian's current signing shares per client (parties 2…n of the signing set).
    private var signingShares: [String: [ShareRecord]] = [:]
    private var sessions: [String: Session] = [:]
    /// Ids of confirmed sessions: confirming one again succeeds, as on the reference server.
    private var confirmed: Set<String> = []

    /// - Parameters:
    ///   - key: The custodian's X25519 key pair (opens sealed backup shares).
    ///   - shareSource: Where the client's custodian backup shares come from.
    ///   - random: The random source.
    public init(key: SealingKeyPair, shareSource: any CustodianShareSource, random: any RandomSource = SystemRandom()) {
        self.key = key
        self.shareSource = shareSource
        self.random = random
    }

    /// Gives the custodian its signing share(s) of a client's set (after key generation).
    public func register(signingShares shares: [ShareRecord], clientId: String) {
        signingShares[clientId] = shares
    }

    /// The custodian's current signing shares for a client.
    public func currentSigningShares(clientId: String) -> [ShareRecord] { signingShares[clientId] ?? [] }

    public func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
        var candidates: [String] = []
        if case .recovery = request.purpose {
            candidates = try await shareSource.fetchBackupShares(clientId: request.clientId)
        }
        let opened = try ResharingCustodian.open(
            request: request, signingShares: signingShares[request.clientId] ?? [], candidates: candidates,
            custodianKey: key,
            using: random)
        let sessionId = request.sessionId ?? Hex.encode(random.bytes(count: 16))
        guard sessions[sessionId] == nil, !confirmed.contains(sessionId) else {
            throw ShareRecoveryError(.conflict, "a session with this id exists already")
        }
        // Checked after the fetch above: the actor may have run another open meanwhile.
        try ResharingCustodian.refuseWhileRunning(
            secondsLeft: sessions.values.filter { $0.clientId == request.clientId }.map { _ in nil })
        sessions[sessionId] = .opened(opened, clientId: request.clientId)
        return ResharingSessionOffer(sessionId: sessionId, plan: opened.plan, custodianDealings: opened.offeredDealings)
    }

    public func finishSession(id: String, clientDealing: Dealing) throws -> ResharingSessionResult {
        guard case .opened(let opened, let clientId)? = sessions[id] else {
            throw ShareRecoveryError(.notFound, "no open resharing session with this id")
        }
        let finished = try opened.finish(clientDealing: clientDealing, custodianPublicKey: key.publicKey, using: random)
        sessions[id] = .pending(finished.pending, clientId: clientId)
        return finished.result
    }

    public func confirmSession(id: String) throws {
        if confirmed.contains(id) { return }
        guard case .pending(let pending, let clientId)? = sessions[id] else {
            throw ShareRecoveryError(.notFound, "no finished resharing session")
        }
        let keep = try pending.confirm(currentSets: (signingShares[clientId] ?? []).map(\.setId))
        sessions[id] = nil
        if let keep { signingShares[clientId] = keep }
        confirmed.insert(id)
    }

    public func abortSession(id: String) {
        sessions[id] = nil
    }

    public func settleSession(_ session: PendingSession) -> SessionSettlement {
        if confirmed.contains(session.sessionId) { return .confirmed }
        sessions[session.sessionId] = nil
        return .abandoned
    }

    /// Whether a session was confirmed: its set is current, and an abort must not answer as if it
    /// were undone (the reference server answers 409).
    public func isConfirmed(id: String) -> Bool { confirmed.contains(id) }
}
