import ShareCrypto
import ShareRecovery

/// The audit trail: `audit_events`, one hash chain per account (AuditChain.swift) appended in the
/// transaction of the change it records, and the anchors over every chain (AuditAnchorRecord.swift).
extension ServerStorage {
    /// Appends `events` at the ends of their accounts' chains, inside the caller's transaction, so they
    /// commit or roll back with the change they record. Each continues from its account's head
    /// (`audit_chain_heads`, one row per account), never from whatever row happens to be newest
    /// (Migrations+AuditChains.swift); no row is shared by every account.
    ///
    /// - SQLite (one writer, statements in process): the head's read, the row's insert, the head's upsert.
    /// - PostgreSQL: the events go to `audit_pending`, and a deferred trigger moves each account's head
    ///   and writes the rows during `COMMIT`, so a head's lock is not held across a round trip.
    ///
    /// Call it as the transaction's last step: the heads' locks are then taken after every other lock.
    /// Events are appended in account order (each account's own in the order given), so two
    /// transactions that append for the same accounts take their heads in one order and cannot deadlock.
    static func appendAudit(_ events: [AuditEvent], in transaction: any SQLTransaction) async throws {
        guard !events.isEmpty else { return }
        // Counted by /metrics when (and only if) the transaction commits.
        CommittedEvents.current?.append(events)
        let ordered = events.enumerated().sorted { ($0.element.account, $0.offset) < ($1.element.account, $1.offset) }
            .map(\.element)
        switch transaction.dialect {
        case .postgres:
            // One statement for all of them (a batch of ``AuditBatches`` holds up to 64).
            let values = ordered.flatMap { event in
                let (fields, encoding) = auditValues(event)
                return fields + [.blob(encoding)]
            }
            let rows = repeatElement("(?, ?, ?, ?, ?, ?)", count: ordered.count).joined(separator: ", ")
            try await transaction.query("\(pendingInsert) VALUES \(rows)", values)
        case .sqlite:
            for event in ordered {
                let (fields, encoding) = auditValues(event)
                let head = try await transaction.query(
                    "SELECT chain_position, hash FROM audit_chain_heads WHERE account = ?", .text(event.account)
                ).first
                let previous = try head?.blob("hash") ?? AuditChain.genesis
                let position = (try head?.integer("chain_position") ?? 0) + 1
                let hash = AuditChain.link(previous: previous, encoding: encoding)
                try await transaction.query(
                    """
                    INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash, chain_position)
                    VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM audit_events), ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    fields + [.blob(previous), .blob(hash), .integer(position)])
                try await transaction.query(
                    """
                    INSERT INTO audit_chain_heads (account, chain_position, previous_hash, hash) VALUES (?, ?, ?, ?)
                    ON CONFLICT (account) DO UPDATE SET chain_position = excluded.chain_position,
                        previous_hash = excluded.previous_hash, hash = excluded.hash
                    """, .text(event.account), .integer(position), .blob(previous), .blob(hash))
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
                "SELECT \(Self.auditColumns) FROM audit_events WHERE account = ? AND seq > ? ORDER BY seq LIMIT ?",
                .text(account),
                .integer(sequence), .integer(Int64(limit))
            ).map(Self.auditRow)
        }
    }

    /// Every row after `sequence`, in sequence order, at most `limit` (the order rows were appended in,
    /// across accounts; for reading).
    func auditChain(after sequence: Int64, limit: Int) async throws -> [AuditRow] {
        try await read { transaction in
            try await transaction.query(
                "SELECT \(Self.auditColumns) FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?", .integer(sequence),
                .integer(Int64(limit))
            ).map(Self.auditRow)
        }
    }

    /// The rows of the single chain written before the per-account chains, after `sequence`, at most
    /// `limit`; on a database without the per-account chains (`chains` false), all of its rows.
    func legacyAuditChain(after sequence: Int64, limit: Int, chains: Bool) async throws -> [AuditRow] {
        let query =
            chains
            ? "SELECT \(Self.auditColumns) FROM audit_events WHERE chain_position IS NULL AND seq > ? ORDER BY seq LIMIT ?"
            : "SELECT seq, at, account, event, request_id, detail, previous_hash, hash FROM audit_events WHERE seq > ? ORDER BY seq LIMIT ?"
        return try await read { transaction in
            try await transaction.query(query, .integer(sequence), .integer(Int64(limit))).map(Self.auditRow)
        }
    }

    /// The per-account chains' rows after row `position` of `account`, by account and then position,
    /// at most `limit` (the verifier's pages, one chain after another).
    func accountAuditChains(after account: String, position: Int64, limit: Int) async throws -> [AuditRow] {
        try await read { transaction in
            try await transaction.query(
                """
                SELECT \(Self.auditColumns) FROM audit_events WHERE chain_position IS NOT NULL
                    AND (account > ? OR (account = ? AND chain_position > ?))
                ORDER BY account, chain_position LIMIT ?
                """, .text(account), .text(account), .integer(position), .integer(Int64(limit))
            ).map(Self.auditRow)
        }
    }

    /// The number of the row of `chain` whose hash is `hash`, if one is stored (to tell a reordered
    /// chain from a broken one).
    func auditNumber(ofHash hash: [UInt8], in chain: AuditChainName) async throws -> Int64? {
        try await read { transaction in
            switch chain {
            case .legacy:
                try await transaction.query(
                    "SELECT seq AS number FROM audit_events WHERE chain_position IS NULL AND hash = ? ORDER BY seq LIMIT 1",
                    .blob(hash)
                ).first?.integer("number")
            case .account(let account):
                try await transaction.query(
                    "SELECT chain_position AS number FROM audit_events WHERE account = ? AND chain_position IS NOT NULL AND hash = ? LIMIT 1",
                    .text(account), .blob(hash)
                ).first?.integer("number")
            case .anchors:
                try await transaction.query(
                    "SELECT seq AS number FROM audit_anchors WHERE hash = ? ORDER BY seq LIMIT 1", .blob(hash)
                ).first?.integer("number")
            }
        }
    }

    /// Whether the database has the audit table (a database of a server that predates it has not).
    func hasAuditTrail() async throws -> Bool { try await hasTable("audit_events") }

    /// Whether the database has the per-account chains (migration 13).
    func hasAuditChains() async throws -> Bool { try await hasTable("audit_anchors") }

    /// The columns an ``AuditRow`` is read from, named: on PostgreSQL a prepared `SELECT *` fails once
    /// a migration adds a column, so a release never reads a table's rows by `*`.
    private static var auditColumns: String {
        "seq, at, account, event, request_id, detail, previous_hash, hash, chain_position"
    }

    private static func auditRow(_ row: SQLRow) throws -> AuditRow {
        let position: Int64? =
            if case .integer(let value)? = row.columns["chain_position"] { value } else { nil }
        return AuditRow(
            sequence: try row.integer("seq"), at: try row.integer("at"), account: try row.text("account"),
            event: try row.text("event"), requestId: try row.text("request_id"), detail: try row.text("detail"),
            previousHash: try row.blob("previous_hash"), hash: try row.blob("hash"), position: position)
    }
}
