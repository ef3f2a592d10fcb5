import ShareCrypto
import ShareRecovery

/// The audit trail: `audit_events`, one global hash chain (AuditChain.swift) appended in the
/// transaction of the change it records.
extension ServerStorage {
    /// Appends `events` at the end of the chain, inside the caller's transaction, so they commit or roll
    /// back with the change they record. Takes the chain's lock (until the transaction ends): call it
    /// as the transaction's last step, so the lock is held briefly and after every other lock (no
    /// lock-order cycle with the row locks of other transactions).
    static func appendAudit(_ events: [AuditEvent], in transaction: any SQLTransaction) async throws {
        guard !events.isEmpty else { return }
        // Counted by /metrics when (and only if) the transaction commits.
        CommittedEvents.current?.append(events)
        // One appender at a time across processes, so the chain never forks (SQLite: already serial).
        try await transaction.lock(AuditChain.lockKey)
        let head = try await transaction.query("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").first
        var sequence = try head?.integer("seq") ?? 0
        var previous = try head?.blob("hash") ?? AuditChain.genesis
        for event in events {
            sequence += 1
            let detail = event.detail.json
            let hash = AuditChain.hash(
                previous: previous, at: event.at, account: event.account, event: event.kind.rawValue,
                requestId: event.requestId, detail: detail)
            try await transaction.query(
                """
                INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                .integer(sequence), .integer(event.at), .text(event.account), .text(event.kind.rawValue),
                .text(event.requestId), .text(detail), .blob(previous), .blob(hash))
            previous = hash
        }
    }

    /// Appends events that go with no other change (a failure after its change rolled back), in a
    /// transaction of their own.
    func recordAudit(_ events: AuditEvent...) async throws {
        try await transaction { transaction in try await Self.appendAudit(events, in: transaction) }
    }

    /// An account's rows after `sequence`, oldest first, at most `limit`.
    func auditEvents(account: String, after sequence: Int64, limit: Int) async throws -> [AuditRow] {
        try await read { transaction in
            try await transaction.query(
                "SELECT * FROM audit_events WHERE account = ? AND seq > ? ORDER BY seq LIMIT ?", .text(account),
                .integer(sequence), .integer(Int64(limit))
            ).map(Self.auditRow)
        }
    }

    /// Every account's rows after `sequence`, in chain order, at most `limit` (the verifier's pages).
    func auditChain(after sequence: Int64, limit: Int) async throws -> [AuditRow] {
        try await read { transaction in
            try await transaction.query(
                "SELECT * FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?", .integer(sequence),
                .integer(Int64(limit))
            ).map(Self.auditRow)
        }
    }

    /// The sequence of the row whose hash is `hash`, if one is stored (to tell a reordered chain from a
    /// broken one).
    func auditSequence(ofHash hash: [UInt8]) async throws -> Int64? {
        try await read { transaction in
            try await transaction.query("SELECT seq FROM audit_events WHERE hash = ? ORDER BY seq LIMIT 1", .blob(hash))
                .first?.integer("seq")
        }
    }

    /// Whether the database has the audit table (a database of a server that predates it has not).
    func hasAuditTrail() async throws -> Bool {
        let sql =
            dialect == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'audit_events'"
            : "SELECT table_name FROM information_schema.tables WHERE table_name = 'audit_events' AND table_schema = current_schema()"
        return try await read { transaction in !(try await transaction.query(sql, [])).isEmpty }
    }

    private static func auditRow(_ row: SQLRow) throws -> AuditRow {
        AuditRow(
            sequence: try row.integer("seq"), at: try row.integer("at"), account: try row.text("account"),
            event: try row.text("event"), requestId: try row.text("request_id"), detail: try row.text("detail"),
            previousHash: try row.blob("previous_hash"), hash: try row.blob("hash"))
    }
}
