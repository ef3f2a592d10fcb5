extension Migrations {
    /// The audit chain's head (docs/server.md, "The hash chain"): one row holding the newest row's
    /// sequence, previous hash and hash, which every append continues from, so a deleted newest row
    /// shows at the next append. Seeded from the newest stored row, or from the genesis hash on an empty
    /// trail.
    ///
    /// On SQLite (one writer) the append reads the head and inserts the row, and a trigger moves the
    /// head. On PostgreSQL the append waits for the commit: a transaction inserts its events into
    /// `audit_pending`, and a deferred constraint trigger moves the head (an `UPDATE … RETURNING` that
    /// computes the hash and locks the row until the transaction ends, so appenders on several servers
    /// queue there and never fork the chain) and writes the chain's rows while `COMMIT` runs. The
    /// head's lock is then held for the commit alone, never across a round trip to the server: held
    /// across round trips, it capped the audited requests of all servers together at one per lock
    /// holding (docs/server.md, "Throughput").
    static let auditHead: [String] = [
        """
        CREATE TABLE audit_head (
            id {int} PRIMARY KEY,
            seq {int} NOT NULL,
            previous_hash {blob} NOT NULL,
            hash {blob} NOT NULL
        )
        """,
        """
        INSERT INTO audit_head (id, seq, previous_hash, hash)
        SELECT 1, seq, previous_hash, hash FROM audit_events WHERE seq = (SELECT MAX(seq) FROM audit_events)
        """,
        """
        INSERT INTO audit_head (id, seq, previous_hash, hash)
        SELECT 1, 0, {genesis}, {genesis} WHERE NOT EXISTS (SELECT 1 FROM audit_head)
        """,
        // SQLite (one writer): the append reads the head, then inserts the row; this trigger moves the
        // head in the same statement.
        """
        {sqlite}CREATE TRIGGER audit_events_head AFTER INSERT ON audit_events BEGIN
            UPDATE audit_head SET seq = NEW.seq, previous_hash = NEW.previous_hash, hash = NEW.hash WHERE id = 1;
        END
        """,
        // `encoding` is AuditChain.encoding of the row's fields, made by the server.
        """
        {postgres}CREATE TABLE audit_pending (
            id BIGSERIAL PRIMARY KEY,
            at BIGINT NOT NULL,
            account TEXT NOT NULL,
            event TEXT NOT NULL,
            request_id TEXT NOT NULL,
            detail TEXT NOT NULL,
            encoding BYTEA NOT NULL
        )
        """,
        """
        {postgres}CREATE FUNCTION audit_chain_append() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            head RECORD;
        BEGIN
            UPDATE audit_head SET seq = seq + 1, previous_hash = hash, hash = sha256(hash || NEW.encoding) WHERE id = 1
            RETURNING seq, previous_hash, hash INTO head;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'the audit chain has no head row (audit_head)';
            END IF;
            INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash)
            VALUES (head.seq, NEW.at, NEW.account, NEW.event, NEW.request_id, NEW.detail, head.previous_hash, head.hash);
            DELETE FROM audit_pending WHERE id = NEW.id;
            RETURN NULL;
        END
        $$
        """,
        """
        {postgres}CREATE CONSTRAINT TRIGGER audit_pending_append AFTER INSERT ON audit_pending
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit_chain_append()
        """,
    ]
}
