import HTTPTypes
import ShareCrypto
import ShareRecovery

/// A resharing session (docs/formats.md §3, custodian side) as the custodian keeps it: a `protocol_sessions`
/// row of protocol `resharing`, whose public JSON holds the purpose, method, plan, public dealings and
/// expected set, and whose sealed state holds the session key and the custodian role's `Opened` state
/// while open, its `Pending` state once finished, and nothing once confirmed.
struct SessionRecord: Sendable {
    /// `confirmed` rows keep no secrets; they stay until they expire so that a confirm retried after its
    /// answer was lost answers as the first one did.
    enum State: String, Sendable { case open, finished, confirmed }

    let id: String
    let clientId: String
    /// `backup` or `recovery`.
    let purpose: String
    /// The §6 method name.
    let method: String
    let state: State
    /// SessionWire JSON of the plan.
    let planJSON: String
    /// Public part of the custodian's dealings: `[{"dealerIndex", "commitments"}]`.
    let dealingsJSON: String
    /// The custodian's current signing set when the session opened ("" when none), for inspection; confirm checks
    /// the copy in the role's `Pending` state.
    let expectedSet: String
    /// The session key and the role's `Opened` bytes, sealed (open sessions).
    let sealedSecrets: [UInt8]
    /// The role's `Pending` bytes after finish, sealed.
    let sealedPending: [UInt8]?
    let expiresAt: Int64
}

/// What deleting a resharing session did.
enum SessionDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// The session was confirmed: its new set is current, and there is nothing left to abandon.
    case confirmed
}

/// Resharing sessions of the custodian role (docs/formats.md §3), in the one session store.
extension ServerStorage {
    /// Stores a new session: the client's one resharing session. While another of the client's sessions
    /// is open or finished (and not expired), a backup or recovery of the account is running from some
    /// device, and this one is refused with 409 `operationInProgress`; the check and the insert share
    /// one transaction under the account's lock (`runningOperation(of:now:in:)`), so two servers on
    /// one database cannot both admit one. `started` is its audit row.
    func createSession(_ session: SessionRecord, now: Int64, started: AuditEvent) async throws {
        let binding = JSONValue.object([
            ("purpose", .string(session.purpose)), ("method", .string(session.method)),
            ("plan", .string(session.planJSON)), ("dealings", .string(session.dealingsJSON)),
            ("expectedSet", .string(session.expectedSet)),
        ])
        let record = ProtocolSessionRecord(
            id: session.id, clientId: session.clientId, kind: .resharing, state: .open,
            publicJSON: JSONWriter.write(binding),
            sealedState: session.sealedSecrets, expiresAt: session.expiresAt)
        try await transaction { transaction in
            let running = try await Self.runningOperation(of: session.clientId, now: now, in: transaction)
            guard
                try await transaction.query("SELECT id FROM protocol_sessions WHERE id = ?", .text(session.id)).isEmpty
            else {
                throw APIError.conflict("a session with this id exists already")
            }
            if let running { throw running }
            try await Self.insert(transaction, record)
            try await Self.appendAudit([started], in: transaction)
        }
    }

    /// The session, unless missing or expired.
    func session(id: String, now: Int64) async throws -> SessionRecord? {
        try await protocolSession(id: id, kind: .resharing, now: now).map(Self.sessionRecord)
    }

    /// open → finished, storing the pending shares; `false` when the session is no longer open.
    func finishSession(id: String, sealedPending: [UInt8]?, now: Int64) async throws -> Bool {
        try await transaction { transaction in
            try await Self.advance(
                transaction, id: id, from: .open, to: .finished, sealedState: sealedPending ?? [], now: now)
        }
    }

    /// Commits a finished session: for a recovery the new signing set replaces the old one, if `confirming`
    /// (the role's rule) accepts the setIds of the current one, read under the client's lock. Confirming a
    /// confirmed session is done already (and `completed`, its audit row, is not appended again). The
    /// row stays, as done and without its sealed state, until `retainUntil`.
    func confirmSession(
        id: String, newShares: [SealedSigningShare]?, now: Int64, retainUntil: Int64, completed: AuditEvent,
        confirming: @escaping @Sendable ([SetID]) throws -> Void
    ) async throws -> SingleUseWrite {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT * FROM protocol_sessions WHERE id = ? AND protocol = 'resharing' AND expires_at > ?\(forUpdate)",
                    .text(id), .integer(now)
                ).first
            else { return .notFound }
            let session = try Self.sessionRecord(try Self.protocolSessionRecord(row))
            if session.state == .confirmed { return .done }
            guard session.state == .finished else { throw APIError.conflict("the session is not finished") }
            if let newShares {
                try await transaction.lock("signing shares \(session.clientId)")
                let current = try await transaction.query(
                    "SELECT DISTINCT set_id FROM signing_shares WHERE client_id = ?", .text(session.clientId)
                ).map { row in
                    guard let bytes = Hex.decode(try row.text("set_id")), let setId = try? SetID(bytes: bytes) else {
                        throw ShareRecoveryError(.storeCorrupted, "a signing share's set_id is not a setId")
                    }
                    return setId
                }
                try confirming(current)
                try await transaction.query("DELETE FROM signing_shares WHERE client_id = ?", .text(session.clientId))
                // Added devices were reshared from sets that stop signing now (docs/devices.md).
                try await Self.dropWalletDevices(clientId: session.clientId, in: transaction)
                for share in newShares {
                    try await transaction.query(
                        "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record) VALUES (?, ?, ?, ?, ?)",
                        .text(session.clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                        .integer(Int64(share.generation)), .blob(share.sealedRecord))
                }
            }
            // Kept answerable long after its lifetime: a device that was cut off learns it was confirmed.
            guard
                try await Self.advance(
                    transaction, id: id, from: .finished, to: .done, now: now, expiresAt: max(retainUntil, now))
            else { throw APIError.conflict("the session changed while it was being confirmed") }
            try await Self.appendAudit([completed], in: transaction)
            return .done
        }
    }

    /// Deletes an open or finished session, with its audit row `aborted`; a confirmed one stays.
    func deleteSession(id: String, aborted: AuditEvent) async throws -> SessionDeletion {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT state FROM protocol_sessions WHERE id = ? AND protocol = 'resharing'\(forUpdate)", .text(id)
                ).first
            else { return .notFound }
            if try row.text("state") == ProtocolSessionRecord.State.done.rawValue { return .confirmed }
            try await transaction.query("DELETE FROM protocol_sessions WHERE id = ?", .text(id))
            try await Self.appendAudit([aborted], in: transaction)
            return .deleted
        }
    }

    private static func sessionRecord(_ record: ProtocolSessionRecord) throws -> SessionRecord {
        let binding = try StrictJSON.parse(Array(record.publicJSON.utf8))
        func text(_ key: String) throws -> String {
            guard case .string(let value)? = binding[key] else {
                throw ShareRecoveryError(.storeCorrupted, "a resharing session's binding lacks \(key)")
            }
            return value
        }
        let state: SessionRecord.State =
            switch record.state {
            case .open: .open
            case .finished: .finished
            case .done: .confirmed
            }
        return SessionRecord(
            id: record.id, clientId: record.clientId, purpose: try text("purpose"), method: try text("method"),
            state: state,
            planJSON: try text("plan"), dealingsJSON: try text("dealings"), expectedSet: try text("expectedSet"),
            sealedSecrets: state == .open ? record.sealedState : [],
            sealedPending: state == .finished && !record.sealedState.isEmpty ? record.sealedState : nil,
            expiresAt: record.expiresAt)
    }
}
