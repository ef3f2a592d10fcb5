import ShareRecovery

/// The integrator events' outbox (`event_outbox`, Migrations+Events.swift): its rows are written by a
/// trigger with the audit rows they announce; these are the delivery worker's and the operator's
/// statements on it.
/// An event claimed for one attempt, with the attempts made before it.
struct ClaimedEvent: Sendable {
    let event: IntegratorEvent
    let attempts: Int
}

extension ServerStorage {
    /// Claims the events due for an attempt: of each account only the oldest pending event (a later one
    /// waits until it is delivered or dead, so each account's events arrive in commit order), due by
    /// `now`, and not claimed by a worker whose claim still runs. On PostgreSQL rows another worker is
    /// claiming are skipped (`FOR UPDATE SKIP LOCKED`), so concurrent servers claim disjoint events; on
    /// SQLite the one writer serialises the claims.
    /// - Parameters:
    ///   - worker: This worker's id, stored as the claim's owner.
    ///   - now: Unix milliseconds.
    ///   - lease: Milliseconds after which the claim may be taken over (its worker presumed dead).
    ///   - limit: The most events to claim.
    func claimEvents(worker: String, now: Int64, lease: Int64, limit: Int) async throws -> [ClaimedEvent] {
        let skipLocked = dialect == .postgres ? " FOR UPDATE OF o SKIP LOCKED" : ""
        return try await transaction { transaction in
            let claimed = try await transaction.query(
                """
                UPDATE event_outbox SET claimed_by = ?, claimed_until = ? WHERE seq IN (
                    SELECT o.seq FROM event_outbox o
                    WHERE o.state = 'pending' AND o.next_attempt_at <= ?
                        AND (o.claimed_until IS NULL OR o.claimed_until <= ?)
                        AND NOT EXISTS (
                            SELECT 1 FROM event_outbox p WHERE p.account = o.account AND p.state = 'pending' AND p.seq < o.seq)
                    ORDER BY o.seq LIMIT ?\(skipLocked)
                ) RETURNING seq
                """, .text(worker), .integer(now + lease), .integer(now), .integer(now), .integer(Int64(limit))
            ).map { try $0.integer("seq") }
            guard !claimed.isEmpty else { return [] }
            let marks = repeatElement("?", count: claimed.count).joined(separator: ", ")
            return try await transaction.query(
                "\(Self.entrySelect) WHERE o.seq IN (\(marks)) ORDER BY o.seq", claimed.map(SQLValue.integer)
            ).map { row in
                let entry = try Self.outboxEntry(row)
                return ClaimedEvent(event: entry.event, attempts: entry.attempts)
            }
        }
    }

    /// Whether the database has the outbox: a server older than the integrator events never created it.
    func hasEventOutbox() async throws -> Bool { try await hasTable("event_outbox") }

    /// Whether any pending event is due by `now` (Unix milliseconds): a read, so an idle worker does
    /// not take SQLite's writer to find nothing.
    func hasDueEvents(now: Int64) async throws -> Bool {
        try await read { transaction in
            !(try await transaction.query(
                """
                SELECT seq FROM event_outbox WHERE state = 'pending' AND next_attempt_at <= ?
                    AND (claimed_until IS NULL OR claimed_until <= ?) LIMIT 1
                """, .integer(now), .integer(now)
            )).isEmpty
        }
    }

    /// Records a 2xx answer: the event is delivered and the account's next event becomes due.
    func eventDelivered(sequence: Int64, now: Int64) async throws {
        _ = try await statementTransaction { transaction in
            try await transaction.query(
                """
                UPDATE event_outbox SET state = 'delivered', attempts = attempts + 1, delivered_at = ?,
                    claimed_by = NULL, claimed_until = NULL, last_error = NULL
                WHERE seq = ? AND state = 'pending'
                """, .integer(now), .integer(sequence))
        }
    }

    /// Records a failed attempt of `worker`'s claim: the event is due again at `nextAttemptAt`, or dead
    /// once it has had `maximumAttempts`. A claim another worker has taken over is left to it.
    /// - Returns: Whether the event is now dead.
    @discardableResult
    func eventFailed(
        sequence: Int64, worker: String, maximumAttempts: Int, nextAttemptAt: Int64, error: String
    ) async throws -> Bool {
        try await statementTransaction { transaction in
            try await transaction.query(
                """
                UPDATE event_outbox SET attempts = attempts + 1,
                    state = CASE WHEN attempts + 1 >= ? THEN 'dead' ELSE 'pending' END,
                    next_attempt_at = ?, claimed_by = NULL, claimed_until = NULL, last_error = ?
                WHERE seq = ? AND state = 'pending' AND claimed_by = ?
                RETURNING state
                """, .integer(Int64(maximumAttempts)), .integer(nextAttemptAt), .text(error), .integer(sequence),
                .text(worker)
            ).first?.text("state") == OutboxEntry.State.dead.rawValue
        }
    }

    /// Outbox rows in commit order after `sequence`, at most `limit`, of one state and account if given.
    func outboxEntries(state: OutboxEntry.State?, account: String?, after sequence: Int64, limit: Int)
        async throws -> [OutboxEntry]
    {
        var conditions = ["o.seq > ?"]
        var values: [SQLValue] = [.integer(sequence)]
        if let state {
            conditions.append("o.state = ?")
            values.append(.text(state.rawValue))
        }
        if let account {
            conditions.append("o.account = ?")
            values.append(.text(account))
        }
        let sql = "\(Self.entrySelect) WHERE \(conditions.joined(separator: " AND ")) ORDER BY o.seq LIMIT ?"
        let bound = values + [.integer(Int64(limit))]
        return try await read { transaction in
            try await transaction.query(sql, bound).map(Self.outboxEntry)
        }
    }

    /// Makes events pending again with fresh attempts: those with `ids` (delivered or dead), or every
    /// dead one when `ids` is `nil`.
    /// - Returns: The ids made pending.
    func redeliverEvents(ids: [String]?) async throws -> [String] {
        var sql = """
            UPDATE event_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0, claimed_by = NULL,
                claimed_until = NULL, last_error = NULL
            """
        var values: [SQLValue] = []
        if let ids {
            guard !ids.isEmpty else { return [] }
            sql +=
                " WHERE state <> 'pending' AND id IN (\(repeatElement("?", count: ids.count).joined(separator: ", ")))"
            values = ids.map(SQLValue.text)
        } else {
            sql += " WHERE state = 'dead'"
        }
        let statement = sql + " RETURNING id"
        let bound = values
        return try await statementTransaction { transaction in
            try await transaction.query(statement, bound).map { try $0.text("id") }
        }
    }

    /// The states of the events with `ids` that exist.
    func outboxStates(ids: [String]) async throws -> [String: OutboxEntry.State] {
        guard !ids.isEmpty else { return [:] }
        let sql =
            "SELECT id, state FROM event_outbox WHERE id IN (\(repeatElement("?", count: ids.count).joined(separator: ", ")))"
        return try await read { transaction in
            var states: [String: OutboxEntry.State] = [:]
            for row in try await transaction.query(sql, ids.map(SQLValue.text)) {
                states[try row.text("id")] = OutboxEntry.State(rawValue: try row.text("state"))
            }
            return states
        }
    }

    /// How many events are pending and how many dead (for `/metrics`).
    func undeliveredEventCounts() async throws -> (pending: Int, dead: Int) {
        try await read { transaction in
            var counts = (pending: 0, dead: 0)
            for row in try await transaction.query(
                "SELECT state, COUNT(*) AS n FROM event_outbox WHERE state IN ('pending', 'dead') GROUP BY state", [])
            {
                let count = Int(try row.integer("n"))
                if try row.text("state") == OutboxEntry.State.dead.rawValue {
                    counts.dead = count
                } else {
                    counts.pending = count
                }
            }
            return counts
        }
    }

    /// An outbox row with its audit row's fields; completed by `WHERE`.
    private static var entrySelect: String {
        """
        SELECT o.seq, o.id, o.account, o.kind, o.state, o.attempts, o.next_attempt_at, o.delivered_at, o.last_error,
            a.at, a.request_id, a.detail
        FROM event_outbox o JOIN audit_events a ON a.seq = o.seq
        """
    }

    private static func outboxEntry(_ row: SQLRow) throws -> OutboxEntry {
        let kindName = try row.text("kind")
        guard let auditKind = AuditEventKind(rawValue: kindName), let kind = IntegratorEventKind(auditKind: auditKind),
            let state = OutboxEntry.State(rawValue: try row.text("state"))
        else {
            throw ShareRecoveryError(.storeCorrupted, "an event_outbox row has an unknown kind or state")
        }
        let event = IntegratorEvent(
            id: try row.text("id"), sequence: try row.integer("seq"), kind: kind, account: try row.text("account"),
            at: try row.integer("at"), requestId: try row.text("request_id"), detail: try row.text("detail"))
        let deliveredAt: Int64? = if case .integer(let value)? = row.columns["delivered_at"] { value } else { nil }
        return OutboxEntry(
            event: event, state: state, attempts: Int(try row.integer("attempts")),
            nextAttemptAt: try row.integer("next_attempt_at"), deliveredAt: deliveredAt,
            lastError: try row.optionalText("last_error"))
    }
}
