extension Migrations {
    /// The integrator events' outbox (docs/server.md, "Integrator events"): one row per announced audit
    /// row, written by a trigger on `audit_events` itself, so an event is in the outbox exactly when its
    /// audited change committed (the audit row is appended in the change's transaction; on PostgreSQL
    /// while that transaction's `COMMIT` runs). `seq` is the audit row's, hence commit order; `id` is
    /// made of the row's chain hash, so it is unique and never changes. The event's body is made of the
    /// audit row (IntegratorEvent.swift), which nothing rewrites, so every attempt sends the same bytes.
    ///
    /// `state` is `pending`, `delivered` or `dead`; `next_attempt_at` and `claimed_until` are Unix
    /// milliseconds. A worker claims a pending row by setting `claimed_by` and `claimed_until`; a claim
    /// whose time passed (its process was killed) is taken over.
    /// The audit row kinds this migration's trigger copies, frozen as released (a new kind needs a
    /// migration that re-creates the trigger, as ``ecdsaEventOutbox`` does).
    static let eventOutboxAuditKinds = [
        "recoveryStarted", "recoveryCompleted", "recoveryFailed", "methodAdded", "methodRotated", "methodDeleted",
        "deviceAdded", "deviceRemoved", "walletCreated", "walletEjected", "otpExhausted",
    ]

    static var eventOutbox: [String] {
        [
            """
            CREATE TABLE event_outbox (
                seq {int} PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                account TEXT NOT NULL,
                kind TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts {int} NOT NULL,
                next_attempt_at {int} NOT NULL,
                claimed_by TEXT,
                claimed_until {int},
                delivered_at {int},
                last_error TEXT
            )
            """,
            "CREATE INDEX event_outbox_state ON event_outbox (state, account, seq)",
            """
            {postgres}CREATE FUNCTION event_outbox_append() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO event_outbox (seq, id, account, kind, state, attempts, next_attempt_at)
                VALUES (NEW.seq, 'evt_' || encode(substring(NEW.hash from 1 for 16), 'hex'), NEW.account, NEW.event,
                    'pending', 0, 0);
                RETURN NULL;
            END
            $$
            """,
        ] + outboxTriggers(copying: eventOutboxAuditKinds)
    }

    /// The audit row kinds the outbox trigger copies since the ECDSA migration: `ecdsaAborted` too,
    /// frozen as released. A test holds the newest list equal to ``IntegratorEventKind``'s.
    static let ecdsaEventOutboxAuditKinds = eventOutboxAuditKinds + ["ecdsaAborted"]

    /// The kinds the newest outbox trigger copies.
    static var announcedAuditKinds: [String] { ecdsaEventOutboxAuditKinds }

    /// The outbox trigger re-created to announce ECDSA signing aborts (docs/server.md, "Integrator
    /// events"); the function it runs is unchanged.
    static var ecdsaEventOutbox: [String] {
        ["{sqlite}DROP TRIGGER audit_events_outbox", "{postgres}DROP TRIGGER audit_events_outbox ON audit_events"]
            + outboxTriggers(copying: ecdsaEventOutboxAuditKinds)
    }

    /// The trigger on `audit_events` that copies the rows of `kinds` into the outbox, in each dialect.
    private static func outboxTriggers(copying kinds: [String]) -> [String] {
        let kinds = kinds.map { "'\($0)'" }.joined(separator: ", ")
        return [
            """
            {sqlite}CREATE TRIGGER audit_events_outbox AFTER INSERT ON audit_events WHEN NEW.event IN (\(kinds)) BEGIN
                INSERT INTO event_outbox (seq, id, account, kind, state, attempts, next_attempt_at)
                VALUES (NEW.seq, 'evt_' || lower(hex(substr(NEW.hash, 1, 16))), NEW.account, NEW.event, 'pending', 0, 0);
            END
            """,
            """
            {postgres}CREATE TRIGGER audit_events_outbox AFTER INSERT ON audit_events
            FOR EACH ROW WHEN (NEW.event IN (\(kinds))) EXECUTE FUNCTION event_outbox_append()
            """,
        ]
    }
}
