import ShareCrypto
import ShareRecovery

/// What a protocol's role produced when its session opens: all a keeper supplies to the one opening
/// sequence besides the checks it runs first.
struct SessionOpening {
    /// The session's public binding (`public_json`): what later steps read back, and what an
    /// inspector of the row may see.
    let binding: JSONValue
    /// The role's state until the next request; sealed under the master key before it is stored.
    let secret: SecureBytes
    /// The members of the 201 body after `sessionId`.
    let answer: [(key: String, value: JSONValue)]
}

/// The one opening sequence of every protocol session the custodian keeps (resharing, DKG, signing,
/// device add): check the account, run the keeper's role, seal its state, store the row (under the
/// account's one-session rule where the kind has it, with the start's audit row where it is
/// audited), count the start. Each keeper supplies only its role's step (``SessionOpening``).
struct ProtocolSessionKeeper: Sendable {
    let state: ServerState
    let kind: ProtocolSessionRecord.Kind

    /// A fresh session id: 32 lowercase hex digits.
    static func newSessionId() -> String { Hex.encode(SystemRandom().bytes(count: 16)) }

    /// Opens a session of ``kind``.
    /// - Parameters:
    ///   - clientId: The account.
    ///   - sessionId: The session's id (a client may choose it; an id in use is refused).
    ///   - walletId: The wallet the session is for, if any: an ejected one is refused (docs/eject.md).
    ///   - started: The start's audit row, for a kind whose start is audited.
    ///   - role: The keeper's checks and its role's opening step, run after the account's check.
    /// - Returns: The 201 body: `sessionId`, then the role's ``SessionOpening/answer``.
    /// - Throws: What `role` throws; 409 `walletEjected`; `StorageRefusal.sessionIdTaken` or
    ///   `.operationInProgress`.
    func open(
        clientId: String, sessionId: String = newSessionId(), walletId: String? = nil, started: AuditEvent? = nil,
        role: () async throws -> SessionOpening
    ) async throws -> JSONValue {
        if let walletId {
            try await WalletSessions(state: state).refuseEjected(clientId: clientId, walletId: walletId)
        }
        let opening = try await role()
        let now = try await state.now()
        let record = ProtocolSessionRecord(
            id: sessionId, clientId: clientId, kind: kind, state: .open, publicJSON: JSONWriter.write(opening.binding),
            sealedState: try state.sealer.seal(
                opening.secret, table: "protocol_sessions", row: [sessionId, kind.sealedStateLabel]),
            expiresAt: now + Int64(state.configuration.sessionLifetimeSeconds))
        try await state.storage.openProtocolSession(
            record, refusedBeside: kind.refusedBeside, now: now, started: started.map { [$0] } ?? []
        )
        if !kind.startIsAudited {
            for name in kind.metricProtocols { state.metrics.session(name, .started) }
        }
        return .object([("sessionId", .string(sessionId))] + opening.answer)
    }
}
