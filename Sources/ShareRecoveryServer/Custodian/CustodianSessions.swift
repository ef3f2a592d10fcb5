import HTTPTypes
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// The custodian role of docs/formats.md §3 behind `/recovery/sessions`: a keeper of the engine's one
/// custodian role (`ResharingCustodian`, which `LocalCustodian` keeps in memory) that seals the role's
/// state into the session row under the master key, so any server process can take the next call.
/// Confirm asks the role (the signing set must not have moved) inside its storage transaction.
struct CustodianSessions: ProtocolSessionKeeping {
    static let sessionKinds: Set<ProtocolSessionRecord.Kind> = [.resharing]

    /// Why a set is reshared.
    enum Purpose: String, Sendable {
        case backup
        case recovery
        /// The signing set into a new one of the same parties, one generation later (docs/formats.md §3).
        case refresh

        /// The token purpose a session of this kind needs: a refresh is the signing device's own
        /// business, like creating the wallet and signing with it.
        var tokenPurpose: TokenPurpose {
            switch self {
            case .backup: .addOrUpdateRecovery
            case .recovery: .recover
            case .refresh: .sign
            }
        }

        /// Whether the session names a backup method: a refresh reshares the signing set itself.
        var needsMethod: Bool { self != .refresh }

        /// The engine's purpose, with the method a backup or recovery names.
        func request(_ method: BackupMethod?) throws -> ResharingSessionRequest.Purpose {
            switch (self, method) {
            case (.backup, let method?): .backup(method)
            case (.recovery, let method?): .recovery(method)
            case (.refresh, nil): .refresh
            default:
                throw APIError.badRequest("backupMethod is required for a backup or recovery, and absent for a refresh")
            }
        }

        /// The audit events of a session of this kind.
        var started: AuditEventKind { pick(.backupStarted, .recoveryStarted, .refreshStarted) }
        var completed: AuditEventKind { pick(.backupCompleted, .recoveryCompleted, .refreshCompleted) }
        var failed: AuditEventKind { pick(.backupFailed, .recoveryFailed, .refreshFailed) }
        var aborted: AuditEventKind { pick(.backupAborted, .recoveryAborted, .refreshAborted) }

        private func pick(_ backup: AuditEventKind, _ recovery: AuditEventKind, _ refresh: AuditEventKind)
            -> AuditEventKind
        {
            switch self {
            case .backup: backup
            case .recovery: recovery
            case .refresh: refresh
            }
        }
    }

    /// A resharing session's purpose, from its binding.
    static func purpose(_ session: ProtocolSessionRecord) throws -> Purpose {
        guard let purpose = Purpose(rawValue: try session.boundText("purpose")) else {
            throw ShareRecoveryError(.storeCorrupted, "a resharing session's purpose is unknown")
        }
        return purpose
    }

    /// An audit event of a session: its id and method (none for a refresh) in the detail.
    static func event(
        _ kind: (Purpose) -> AuditEventKind, _ session: ProtocolSessionRecord, origin: AuditOrigin,
        _ fill: (inout AuditEvent.Detail) -> Void = { _ in }
    ) throws -> AuditEvent {
        let method = BackupMethod(name: try session.boundText("method"))
        return origin.event(kind(try purpose(session)), account: session.clientId) {
            $0.sessionId = session.id
            $0.method = method
            fill(&$0)
        }
    }

    let state: ServerState

    // MARK: Open

    /// Opens the session with the one custodian role (`ResharingCustodian.open`) and stores its state:
    /// sealed, the session key and the role's `Opened` bytes; in the public JSON, the plan, the public
    /// half of the dealings and the expected set, for whoever inspects the row.
    /// Audited: `backupStarted`, `recoveryStarted` or `refreshStarted` with the session's row, or
    /// `…Failed` (step `open`).
    /// - Returns: The 201 body: `sessionId`, `plan`, `custodianDealings`, `custodianKey`.
    /// - Parameter sessionId: The id the client chose and recorded (32 lowercase hex digits), or `nil`
    ///   for a random one; an id that exists already is 409.
    func open(
        clientId: String, purpose: Purpose, method: BackupMethod?, clientShare: ShareRecord, clientKey: [UInt8],
        sessionId chosenId: String? = nil, origin: AuditOrigin
    ) async throws -> JSONValue {
        let sessionId = chosenId ?? ProtocolSessionKeeper.newSessionId()
        let event = { (kind: AuditEventKind) in
            origin.event(kind, account: clientId) {
                $0.sessionId = sessionId
                $0.method = method
                $0.step = kind == purpose.failed ? "open" : nil
            }
        }
        return try await state.recordingFailure(event(purpose.failed)) {
            try await open(
                clientId: clientId, purpose: purpose, method: method, clientShare: clientShare, clientKey: clientKey,
                sessionId: sessionId, started: event(purpose.started))
        }
    }

    private func open(
        clientId: String, purpose: Purpose, method: BackupMethod?, clientShare: ShareRecord, clientKey: [UInt8],
        sessionId: String, started: AuditEvent
    ) async throws -> JSONValue {
        try await ProtocolSessionKeeper(state: state, kind: .resharing).open(
            clientId: clientId, sessionId: sessionId, started: started
        ) { () async throws -> SessionOpening in
            let own = try await signingShares(clientId: clientId)
            var candidates: [String] = []
            if purpose == .recovery {
                candidates = try await state.fetcher.fetch(clientId: clientId, webhookBase: state.webhookBase)
            }
            let request = ResharingSessionRequest(
                clientId: clientId, purpose: try purpose.request(method), clientShare: clientShare)
            let opened = try checkingClientInput {
                try ResharingCustodian.open(
                    request: request, signingShares: own, candidates: candidates, custodianKey: state.custodianKey)
            }
            let plan = opened.plan
            let sessionKey = SealingKeyPair()
            // The client receives only its own sub-share of each custodian dealing, sealed to its session key.
            let offered = try checkingClientInput {
                try opened.offeredDealings.map {
                    try SessionWire.encode($0, sealingTo: [plan.oldSet.partyIndex: clientKey])
                }
            }
            let publicDealings = JSONValue.array(
                opened.dealings.map {
                    .object([
                        ("dealerIndex", .number(String($0.dealerIndex))),
                        ("commitments", SessionWire.encode(points: $0.commitments)),
                    ])
                })
            return SessionOpening(
                binding: .object([
                    ("purpose", .string(purpose.rawValue)), ("method", .string(method?.name ?? "")),
                    ("plan", .string(JSONWriter.write(SessionWire.encode(plan)))),
                    ("dealings", .string(JSONWriter.write(publicDealings))),
                    ("expectedSet", .string(opened.expectedSet?.hex ?? "")),
                ]),
                secret: SecureBytes.concatenating([sessionKey.secretKey, opened.serialized()]),
                answer: [
                    ("plan", SessionWire.encode(plan)), ("custodianDealings", .array(offered)),
                    ("custodianKey", .string(Hex.encode(sessionKey.publicKey))),
                ])
        }
    }

    // MARK: Finish

    /// Unseals the role's `Opened` state, lets it finish with the client's dealing (§3 steps 2–5), and
    /// stores its `Pending` state sealed. A refusal is audited as `…Failed` (step `finish`).
    /// - Returns: The 200 body: `newCommitments` and `custodianBackupShares` (empty for a recovery).
    func finish(_ session: ProtocolSessionRecord, clientDealing: JSONValue, origin: AuditOrigin) async throws
        -> JSONValue
    {
        try await state.recordingFailure(try Self.event(\.failed, session, origin: origin) { $0.step = "finish" }) {
            try await finish(session, clientDealing: clientDealing)
        }
    }

    private func finish(_ session: ProtocolSessionRecord, clientDealing: JSONValue) async throws -> JSONValue {
        guard session.state == .open else { throw APIError.conflict("the session is already finished") }
        let secrets = try state.sealer.open(
            session.sealedState, table: "protocol_sessions",
            row: [session.id, ProtocolSessionRecord.Kind.resharing.sealedStateLabel])
        guard secrets.count > 32 else {
            throw ShareRecoveryError(.storeCorrupted, "the session's secrets are truncated")
        }
        let sessionKey = try SealingKeyPair(secretKey: try secrets.slice(0..<32))
        let opened = try ResharingCustodian.Opened(serialized: try secrets.slice(32..<secrets.count))
        let finished = try checkingClientInput { () throws -> ResharingCustodian.Finished in
            let received = try SessionWire.decodeDealing(
                clientDealing, curve: opened.plan.oldSet.curve, openingWith: sessionKey)
            return try opened.finish(clientDealing: received, custodianPublicKey: state.custodianKey.publicKey)
        }
        let sealedPending = try state.sealer.seal(
            try finished.pending.serialized(), table: "protocol_sessions", row: [session.id, "pending"])
        guard try await state.storage.finishSession(id: session.id, sealedPending: sealedPending, now: state.now())
        else {
            throw APIError.conflict("the session is already finished")
        }
        let result = finished.result
        return .object([
            ("newCommitments", SessionWire.encode(points: result.newCommitments)),
            ("custodianBackupShares", .array(result.custodianBackupShares.map { .string($0) })),
        ])
    }

    // MARK: Confirm

    /// Unseals the role's `Pending` state and makes what its confirm returns current, inside the storage
    /// transaction that reads the current set: for a recovery or a refresh the old signing set is
    /// dropped there.
    /// A confirmed session is confirmed already: a retry after a lost answer succeeds and changes nothing.
    /// Audited: `backupCompleted`, `recoveryCompleted` or `refreshCompleted` (with the new signing set)
    /// in the transaction, or
    /// `…Failed` (step `confirm`) after it rolled back.
    func confirm(_ session: ProtocolSessionRecord, origin: AuditOrigin) async throws {
        if session.state == .done { return }
        try await state.recordingFailure(try Self.event(\.failed, session, origin: origin) { $0.step = "confirm" }) {
            try await confirmFinished(session, origin: origin)
        }
    }

    private func confirmFinished(_ session: ProtocolSessionRecord, origin: AuditOrigin) async throws {
        guard session.state == .finished, !session.sealedState.isEmpty else {
            throw APIError.conflict("the session is not finished")
        }
        let pending = try ResharingCustodian.Pending(
            serialized: try state.sealer.open(
                session.sealedState, table: "protocol_sessions", row: [session.id, "pending"]))
        // Sealed before the transaction; the transaction asks the role whether they may become current.
        let newShares = try pending.signingSetToKeep?.map { try sealedSigningShare($0, clientId: session.clientId) }
        let now = try await state.now()
        let retainUntil = now + Int64(state.configuration.confirmedSessionRetentionSeconds)
        let completed = try Self.event(\.completed, session, origin: origin) {
            $0.setId = newShares?.first?.setId
            $0.generation = newShares?.first?.generation
        }
        // A refresh replaces only the set it refreshed: added devices keep theirs (docs/devices.md).
        let outcome = try await state.storage.confirmSession(
            id: session.id, newShares: newShares, keepingDevices: try Self.purpose(session) == .refresh, now: now,
            retainUntil: retainUntil, completed: completed
        ) { currentSets in
            _ = try checkingClientInput { try pending.confirm(currentSets: currentSets) }
        }
        switch outcome {
        case .done: return
        case .notFound, .tokenSpent: throw APIError.notFound("no such session")
        }
    }

    // MARK: Signing shares

    /// The custodian's current signing shares of a client, opened.
    func signingShares(clientId: String) async throws -> [ShareRecord] {
        try await state.storage.signingShares(clientId: clientId).map { try open($0, clientId: clientId) }
    }

    /// One stored signing share of a client, opened and checked against its row.
    func open(_ stored: SealedSigningShare, clientId: String) throws -> ShareRecord {
        let binary = try state.sealer.open(
            stored.sealedRecord, table: "signing_shares", row: [clientId, String(stored.partyIndex), stored.setId])
        let record = try ShareRecord(binary: binary)
        guard record.partyIndex == stored.partyIndex, record.setId.hex == stored.setId else {
            throw ShareRecoveryError(.storeCorrupted, "a signing share disagrees with its row")
        }
        return record
    }

    /// A signing share sealed for its row.
    func sealedSigningShare(_ record: ShareRecord, clientId: String) throws -> SealedSigningShare {
        SealedSigningShare(
            partyIndex: record.partyIndex, setId: record.setId.hex, generation: record.generation,
            sealedRecord: try state.sealer.seal(
                try record.binary(), table: "signing_shares",
                row: [clientId, String(record.partyIndex), record.setId.hex]))
    }

}
