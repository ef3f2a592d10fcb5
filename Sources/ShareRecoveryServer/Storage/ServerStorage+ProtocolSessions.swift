import ShareCrypto
import ShareRecovery

/// A row of `protocol_sessions`, the one session store of every multi-round protocol the custodian
/// takes part in: resharing (docs/formats.md §3), DKG (§10), signing (§11), device add
/// (docs/devices.md), and ECDSA pair setups and signatures (§12, docs/ecdsa.md). A resharing
/// session's binding holds its purpose, method, plan, public dealings and expected set; its sealed
/// state holds the session key and the custodian role's `Opened` state while open, its `Pending`
/// state once finished, and nothing once done (confirmed).
struct ProtocolSessionRecord: Sendable {
    /// Which protocol role the sealed state belongs to (what each kind is to the server:
    /// `ProtocolSessionKind.swift`).
    enum Kind: String, Sendable, CaseIterable { case resharing, dkg, signing, deviceAdd, ecdsaPairSetup, ecdsaSigning }
    /// `open`, then (resharing, and an ECDSA signature after its round 2) `finished`, then `done`;
    /// `done` rows keep no secret and wait for expiry, so a retried request learns what happened (a
    /// confirmed resharing session answers a retried confirm as the first one did).
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

extension ProtocolSessionRecord {
    /// A text member of the session's public binding.
    func boundText(_ key: String) throws -> String {
        guard case .string(let value)? = try StrictJSON.parse(Array(publicJSON.utf8))[key] else {
            throw ShareRecoveryError(.storeCorrupted, "a \(kind.rawValue) session's binding lacks \(key)")
        }
        return value
    }
}

/// The session store. A session advances by compare-and-swap on its state, in the same transaction as
/// what the step produces, so a replayed or concurrent request finds it advanced and is refused.
extension ServerStorage {
    /// Stores a new session with its `started` audit rows. While another of the account's sessions of
    /// the kinds `refusedBeside` names is open or finished (and not expired), this one is refused (a
    /// backup or recovery of the account is running from some device, or an ECDSA session); the check
    /// and the insert share one transaction under the account's lock
    /// (`runningOperation(of:now:in:kinds:)`), so two servers on one database cannot both admit one.
    /// - Throws: `StorageRefusal.sessionIdTaken` for an id in use, `.operationInProgress`,
    ///   `.ecdsaSessionInProgress`.
    func openProtocolSession(
        _ session: ProtocolSessionRecord, refusedBeside kinds: [ProtocolSessionRecord.Kind], now: Int64,
        started: [AuditEvent]
    ) async throws {
        try await transaction { transaction in
            let running =
                kinds.isEmpty
                ? nil
                : try await Self.runningOperation(
                    of: session.clientId, now: now, in: transaction, kinds: kinds,
                    superseding: session.kind.supersedesUnfinished ? session.kind : nil)
            guard try await Self.insert(transaction, session) else { throw StorageRefusal.sessionIdTaken }
            // After the insert, so an id in use is told as such; the refusal rolls the insert back.
            if let running { throw running }
            try await Self.appendAudit(started, in: transaction)
        }
    }

    /// Inserts a new session row; `false` when a session with its id exists already (the primary key
    /// answers, so no statement of its own is spent on asking).
    private static func insert(_ transaction: some SQLTransaction, _ session: ProtocolSessionRecord) async throws
        -> Bool
    {
        try await !transaction.query(
            """
            INSERT INTO protocol_sessions (id, client_id, protocol, state, public_json, sealed_state, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING id
            """,
            .text(session.id), .text(session.clientId), .text(session.kind.rawValue), .text(session.state.rawValue),
            .text(session.publicJSON), .blob(session.sealedState), .integer(session.expiresAt)
        ).isEmpty
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
    /// - Throws: `StorageRefusal.walletExists` when the client already has a signing set.
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
                throw StorageRefusal.walletExists
            }
            try await transaction.query(
                "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record, stored_at) VALUES (?, ?, ?, ?, ?, ?)",
                .text(clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                .integer(Int64(share.generation)),
                .blob(share.sealedRecord), .integer(now))
            try await Self.appendAudit([created], in: transaction)
            return true
        }
    }

    /// open → done for a signing session: its nonce is consumed in the transaction that releases the
    /// signature share, and only if the custodian's signing set is still the one the session signs for.
    /// - Returns: `false` when the session is no longer open: the nonce was used (`nonceReused`).
    /// - Throws: `StorageRefusal.signingSetChanged` after a recovery or a device removal since it opened.
    /// - Parameter from: The state the session signs from: `open` for FROST, `finished` (after round 2)
    ///   for ECDSA.
    func completeSigning(
        id: String, clientId: String, setId: String, from: ProtocolSessionRecord.State = .open, now: Int64,
        released: AuditEvent
    ) async throws -> Bool {
        try await transaction { transaction in
            guard try await Self.advance(transaction, id: id, from: from, now: now) else { return false }
            // The primary set or an added device's (docs/devices.md); a removed device's set is gone.
            guard try await Self.currentSetIds(clientId: clientId, in: transaction).contains(setId) else {
                throw StorageRefusal.signingSetChanged
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
