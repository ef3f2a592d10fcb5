import ShareCrypto
import ShareRecovery

/// A row of `protocol_sessions`, the one session store of every multi-round protocol the custodian
/// takes part in: resharing (docs/formats.md §3), DKG (§10) and signing (§11).
struct ProtocolSessionRecord: Sendable {
    /// Which protocol role the sealed state belongs to.
    enum Kind: String, Sendable { case resharing, dkg, signing, deviceAdd }
    /// `open`, then (resharing only) `finished`, then `done`; `done` rows keep no secret and wait for
    /// expiry, so a retried request learns what happened.
    enum State: String, Sendable { case open, finished, done }

    let id: String
    let clientId: String
    let kind: Kind
    let state: State
    /// The session's public binding: wallet, set, curve, mode, the custodian's own commitment.
    let publicJSON: String
    /// The role's state between the two requests, sealed under the master key; empty once done.
    let sealedState: [UInt8]
    let expiresAt: Int64
}

/// The session store. A session advances by compare-and-swap on its state, in the same transaction as
/// what the step produces, so a replayed or concurrent request finds it advanced and is refused.
extension ServerStorage {
    func createProtocolSession(_ session: ProtocolSessionRecord) async throws {
        try await transaction { transaction in try await Self.insert(transaction, session) }
    }

    /// Inserts a new session row.
    static func insert(_ transaction: some SQLTransaction, _ session: ProtocolSessionRecord) async throws {
        try await transaction.query(
            """
            INSERT INTO protocol_sessions (id, client_id, protocol, state, public_json, sealed_state, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            .text(session.id), .text(session.clientId), .text(session.kind.rawValue), .text(session.state.rawValue),
            .text(session.publicJSON), .blob(session.sealedState), .integer(session.expiresAt))
    }

    /// The session, unless missing, expired or of another protocol.
    func protocolSession(id: String, kind: ProtocolSessionRecord.Kind, now: Int64) async throws
        -> ProtocolSessionRecord?
    {
        try await read { transaction in
            guard let row = try await transaction.query("SELECT * FROM protocol_sessions WHERE id = ?", .text(id)).first
            else {
                return nil
            }
            let session = try Self.protocolSessionRecord(row)
            return session.expiresAt > now && session.kind == kind ? session : nil
        }
    }

    /// open → done for a DKG session, storing the custodian's new signing share in the same transaction.
    /// - Returns: `false` when the session is no longer open (already finished, or raced).
    /// - Throws: 409 when the client already has a signing set: a DKG never replaces a wallet.
    func completeDKG(id: String, share: SealedSigningShare, clientId: String, now: Int64, created: AuditEvent)
        async throws
        -> Bool
    {
        try await transaction { transaction in
            guard try await Self.advance(transaction, id: id, now: now) else { return false }
            try await transaction.lock("signing shares \(clientId)")
            guard
                try await transaction.query("SELECT set_id FROM signing_shares WHERE client_id = ?", .text(clientId))
                    .isEmpty
            else {
                throw APIError.conflict("this user already has a wallet; a DKG does not replace it")
            }
            try await transaction.query(
                "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record) VALUES (?, ?, ?, ?, ?)",
                .text(clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                .integer(Int64(share.generation)),
                .blob(share.sealedRecord))
            try await Self.appendAudit([created], in: transaction)
            return true
        }
    }

    /// open → done for a signing session: its nonce is consumed in the transaction that releases the
    /// signature share, and only if the custodian's signing set is still the one the session signs for.
    /// - Returns: `false` when the session is no longer open: the nonce was used (`nonceReused`).
    /// - Throws: 409 when the custodian's signing set changed (a recovery) since the session opened.
    func completeSigning(id: String, clientId: String, setId: String, now: Int64, released: AuditEvent) async throws
        -> Bool
    {
        try await transaction { transaction in
            guard try await Self.advance(transaction, id: id, now: now) else { return false }
            // The primary set or an added device's (docs/devices.md); a removed device's set is gone.
            guard try await Self.currentSetIds(clientId: clientId, in: transaction).contains(setId) else {
                throw APIError.conflict("the custodian's signing set changed since this signing session opened")
            }
            try await Self.appendAudit([released], in: transaction)
            return true
        }
    }

    /// The compare-and-swap: the one statement that lets a session leave a state, once. With
    /// `expiresAt`, the same statement also moves the row's expiry (a confirmed session's retention), so
    /// the step costs one statement, not two.
    static func advance(
        _ transaction: any SQLTransaction, id: String, from: ProtocolSessionRecord.State = .open,
        to: ProtocolSessionRecord.State = .done, sealedState: [UInt8] = [], now: Int64, expiresAt: Int64? = nil
    ) async throws -> Bool {
        let changed =
            if let expiresAt {
                try await transaction.query(
                    "UPDATE protocol_sessions SET state = ?, sealed_state = ?, expires_at = ? WHERE id = ? AND state = ? AND expires_at > ? RETURNING id",
                    .text(to.rawValue), .blob(sealedState), .integer(expiresAt), .text(id), .text(from.rawValue),
                    .integer(now))
            } else {
                try await transaction.query(
                    "UPDATE protocol_sessions SET state = ?, sealed_state = ? WHERE id = ? AND state = ? AND expires_at > ? RETURNING id",
                    .text(to.rawValue), .blob(sealedState), .text(id), .text(from.rawValue), .integer(now))
            }
        return !changed.isEmpty
    }

    static func protocolSessionRecord(_ row: SQLRow) throws -> ProtocolSessionRecord {
        guard let kind = ProtocolSessionRecord.Kind(rawValue: try row.text("protocol")),
            let state = ProtocolSessionRecord.State(rawValue: try row.text("state"))
        else { throw ShareRecoveryError(.storageFailure, "unknown protocol session kind or state") }
        return ProtocolSessionRecord(
            id: try row.text("id"), clientId: try row.text("client_id"), kind: kind, state: state,
            publicJSON: try row.text("public_json"), sealedState: try row.blob("sealed_state"),
            expiresAt: try row.integer("expires_at"))
    }
}
