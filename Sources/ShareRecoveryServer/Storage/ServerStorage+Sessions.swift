import ShareCrypto
import ShareRecovery

/// A resharing session row (FORMATS.md §3, custodian side).
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
    /// The custodian's current signing set when the session opened ("" when none): confirm refuses if it moved.
    let expectedSet: String
    /// Session key and the custodian's sub-shares for its own new parties, sealed.
    let sealedSecrets: [UInt8]
    /// The custodian's new shares after finish (recovery), sealed.
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

/// Resharing sessions of the custodian role (FORMATS.md §3).
extension ServerStorage {
    func createSession(_ session: SessionRecord) async throws {
        try await transaction { transaction -> Void in
            try await transaction.query(
                """
                INSERT INTO recovery_sessions
                    (id, client_id, purpose, method, state, plan_json, dealings_json, expected_set, sealed_secrets, sealed_pending, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
                """,
                .text(session.id), .text(session.clientId), .text(session.purpose), .text(session.method),
                .text(session.state.rawValue), .text(session.planJSON), .text(session.dealingsJSON),
                .text(session.expectedSet),
                .blob(session.sealedSecrets), .integer(session.expiresAt))
        }
    }

    /// The session, unless missing or expired.
    func session(id: String, now: Int64) async throws -> SessionRecord? {
        try await read { transaction in
            guard let row = try await transaction.query("SELECT * FROM recovery_sessions WHERE id = ?", .text(id)).first
            else {
                return nil
            }
            let session = try Self.sessionRecord(row)
            return session.expiresAt > now ? session : nil
        }
    }

    /// open → finished, storing the pending shares; `false` when the session is no longer open.
    func finishSession(id: String, sealedPending: [UInt8]?, now: Int64) async throws -> Bool {
        try await transaction { transaction in
            let pending: SQLValue = sealedPending.map { .blob($0) } ?? .null
            return try await !transaction.query(
                "UPDATE recovery_sessions SET state = 'finished', sealed_pending = ? WHERE id = ? AND state = 'open' AND expires_at > ? RETURNING id",
                pending, .text(id), .integer(now)
            ).isEmpty
        }
    }

    /// Commits a finished session: for a recovery the new signing set replaces the old one, if the old one is
    /// still what the session was planned against. Confirming a confirmed session is done already.
    /// The row stays, as `confirmed` and without its sealed secrets, until it expires.
    func confirmSession(id: String, newShares: [SealedSigningShare]?, now: Int64) async throws -> SingleUseWrite {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT * FROM recovery_sessions WHERE id = ? AND expires_at > ?\(forUpdate)", .text(id),
                    .integer(now)
                ).first
            else { return .notFound }
            let session = try Self.sessionRecord(row)
            if session.state == .confirmed { return .done }
            guard session.state == .finished else { throw APIError.conflict("the session is not finished") }
            if let newShares {
                try await transaction.lock("signing shares \(session.clientId)")
                let current = try await transaction.query(
                    "SELECT DISTINCT set_id FROM signing_shares WHERE client_id = ?", .text(session.clientId)
                ).map { try $0.text("set_id") }
                guard current == (session.expectedSet.isEmpty ? [] : [session.expectedSet]) else {
                    throw APIError.conflict("the custodian's signing set changed since this session opened")
                }
                try await transaction.query("DELETE FROM signing_shares WHERE client_id = ?", .text(session.clientId))
                for share in newShares {
                    try await transaction.query(
                        "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record) VALUES (?, ?, ?, ?, ?)",
                        .text(session.clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                        .integer(Int64(share.generation)), .blob(share.sealedRecord))
                }
            }
            try await transaction.query(
                "UPDATE recovery_sessions SET state = 'confirmed', sealed_secrets = ?, sealed_pending = NULL WHERE id = ?",
                .blob([]), .text(id))
            return .done
        }
    }

    /// Deletes an open or finished session; a confirmed one stays.
    func deleteSession(id: String) async throws -> SessionDeletion {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT state FROM recovery_sessions WHERE id = ?\(forUpdate)", .text(id)
                ).first
            else { return .notFound }
            if try row.text("state") == SessionRecord.State.confirmed.rawValue { return .confirmed }
            try await transaction.query("DELETE FROM recovery_sessions WHERE id = ?", .text(id))
            return .deleted
        }
    }

    private static func sessionRecord(_ row: SQLRow) throws -> SessionRecord {
        guard let state = SessionRecord.State(rawValue: try row.text("state")) else {
            throw ShareRecoveryError(.storageFailure, "unknown session state")
        }
        return SessionRecord(
            id: try row.text("id"), clientId: try row.text("client_id"), purpose: try row.text("purpose"),
            method: try row.text("method"), state: state, planJSON: try row.text("plan_json"),
            dealingsJSON: try row.text("dealings_json"), expectedSet: try row.text("expected_set"),
            sealedSecrets: try row.blob("sealed_secrets"), sealedPending: try row.optionalBlob("sealed_pending"),
            expiresAt: try row.integer("expires_at"))
    }
}
