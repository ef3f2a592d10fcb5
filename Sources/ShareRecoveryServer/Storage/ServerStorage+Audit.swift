import ShareCrypto
import ShareRecovery

/// The audit trail: `audit_events`, one global hash chain (AuditChain.swift) appended in the
/// transaction of the change it records.
extension ServerStorage {
    /// Appends `events` at the end of the chain, inside the caller's transaction, so they commit or roll
    /// back with the change they record. Each continues from the chain's head (`audit_head`, one row),
    /// never from whatever row happens to be newest (Migrations+AuditHead.swift).
    ///
    /// - SQLite (one writer, statements in process): the head's read, then the row's insert, which a
    ///   trigger copies into the head.
    /// - PostgreSQL: the events go to `audit_pending`, and a deferred trigger moves the head and writes
    ///   the rows during `COMMIT` (Migrations+AuditHead.swift), so the head's lock is not held across a
    ///   round trip.
    ///
    /// Call it as the transaction's last step: the head's lock is then taken after every other lock,
    /// so it cannot close a lock-order cycle.
    static func appendAudit(_ events: [AuditEvent], in transaction: any SQLTransaction) async throws {
        guard !events.isEmpty else { return }
        // Counted by /metrics when (and only if) the transaction commits.
        CommittedEvents.current?.append(events)
        switch transaction.dialect {
        case .postgres:
            // One statement for all of them (a batch of ``AuditBatches`` holds up to 64).
            let values = events.flatMap { event in
                let (fields, encoding) = auditValues(event)
                return fields + [.blob(encoding)]
            }
            let rows = repeatElement("(?, ?, ?, ?, ?, ?)", count: events.count).joined(separator: ", ")
            try await transaction.query("\(pendingInsert) VALUES \(rows)", values)
        case .sqlite:
            for event in events {
                let (fields, encoding) = auditValues(event)
                guard let head = try await transaction.query("SELECT seq, hash FROM audit_head WHERE id = 1").first
                else { throw Self.noChainHead }
                let previous = try head.blob("hash")
                try await transaction.query(
                    """
                    INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [.integer(try head.integer("seq") + 1)] + fields
                        + [.blob(previous), .blob(AuditChain.link(previous: previous, encoding: encoding))])
            }
        }
    }

    /// PostgreSQL's pending audit row, its columns in the order of ``auditValues(_:)``'s fields and then
    /// the encoding; completed by `VALUES` or a `SELECT`.
    static var pendingInsert: String { "INSERT INTO audit_pending (at, account, event, request_id, detail, encoding)" }

    /// A row's fields as bound (`at`, `account`, `event`, `request_id`, `detail`), and its chain encoding.
    static func auditValues(_ event: AuditEvent) -> (fields: [SQLValue], encoding: [UInt8]) {
        let detail = event.detail.json
        let encoding = AuditChain.encoding(
            at: event.at, account: event.account, event: event.kind.rawValue, requestId: event.requestId, detail: detail
        )
        return (
            [
                .integer(event.at), .text(event.account), .text(event.kind.rawValue), .text(event.requestId),
                .text(detail),
            ], encoding
        )
    }

    /// The head row is written by the migration that creates it; a database without it was not migrated.
    private static var noChainHead: ShareRecoveryError {
        ShareRecoveryError(
            .storageFailure, "the audit chain has no head row (audit_head): the database's migrations did not run")
    }

    /// Appends events that go with no other change (a failure after its change rolled back), committed
    /// before it returns: on PostgreSQL joined with those of concurrent requests (``AuditBatches``), else
    /// in a transaction of their own. A request whose `Idempotency-Key` is to be taken with them
    /// (``IdempotencyClaim``) commits them in its own transaction, which takes the key.
    func recordAudit(_ events: [AuditEvent]) async throws {
        guard !events.isEmpty else { return }
        guard let batches = joiningBatches else {
            return try await transaction { transaction in try await Self.appendAudit(events, in: transaction) }
        }
        try await batches.append(events) { batch in
            try await statementTransaction { transaction in try await Self.appendAudit(batch, in: transaction) }
        }
    }

    func recordAudit(_ events: AuditEvent...) async throws { try await recordAudit(events) }

    /// The batcher this request's audit rows join, if they join one: PostgreSQL's, unless the request's
    /// `Idempotency-Key` is to be taken with them (in a transaction of their own, which takes it).
    private var joiningBatches: AuditBatches? { IdempotencyClaim.current == nil ? auditBatches : nil }

    /// An audited read: `body` reads, and the events `audit` makes of its result are committed before
    /// the result is returned, so nothing is served unrecorded. On SQLite the read and the append are
    /// one transaction of the writer. On PostgreSQL the read runs alone and the rows are appended by
    /// ``recordAudit(_:)-([AuditEvent])``, joined with those of concurrent reads: an audited read does
    /// not wait for the chain's head and a flush of its own. The row takes its place in the chain when
    /// its batch commits, up to two batch commits after the read, so a change committed meanwhile (a
    /// rotation, a deletion) can precede it (docs/server.md, "Audited reads are joined on PostgreSQL").
    func auditedRead<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result,
        audit: @escaping @Sendable (Result) -> [AuditEvent]
    ) async throws -> Result {
        guard joiningBatches != nil else {
            return try await transaction { transaction in
                let result = try await body(transaction)
                try await Self.appendAudit(audit(result), in: transaction)
                return result
            }
        }
        let result = try await read(body)
        try await recordAudit(audit(result))
        return result
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
    func hasAuditTrail() async throws -> Bool { try await hasTable("audit_events") }

    private static func auditRow(_ row: SQLRow) throws -> AuditRow {
        AuditRow(
            sequence: try row.integer("seq"), at: try row.integer("at"), account: try row.text("account"),
            event: try row.text("event"), requestId: try row.text("request_id"), detail: try row.text("detail"),
            previousHash: try row.blob("previous_hash"), hash: try row.blob("hash"))
    }
}
