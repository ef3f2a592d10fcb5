extension Migrations {
    /// The per-account chains (the migration after the ECDSA ones) (docs/server.md, "The hash chains"): each account's rows
    /// link to that account's previous row, its head kept in `audit_chain_heads` (one row per account),
    /// so audited commits of different accounts never wait on one row; `audit_anchors` commit to the
    /// heads of every chain now and then, written by whichever server gets the turn (`audit_anchor_head`,
    /// taken with `SKIP LOCKED`), never by a request.
    ///
    /// Expand only: the rows already written keep their single chain (`chain_position` NULL) and verify as
    /// before; the first anchor commits to that chain's newest row. On PostgreSQL the append function
    /// is replaced in place, so a server of the previous release, which still inserts into
    /// `audit_pending`, appends to the per-account chains too while both releases run. `audit_head` is
    /// no longer moved, and a later release drops it (the contract step).
    static let auditChains: [String] = [
        "ALTER TABLE audit_events ADD COLUMN chain_position {int}",
        // Unique: two appends of one account can never take one position (NULLs, the old rows, never collide).
        "CREATE UNIQUE INDEX audit_events_chain ON audit_events (account, chain_position)",
        """
        CREATE TABLE audit_chain_heads (
            account TEXT PRIMARY KEY,
            chain_position {int} NOT NULL,
            previous_hash {blob} NOT NULL,
            hash {blob} NOT NULL
        )
        """,
        """
        CREATE TABLE audit_anchors (
            seq {int} PRIMARY KEY,
            at {int} NOT NULL,
            heads TEXT NOT NULL,
            previous_hash {blob} NOT NULL,
            hash {blob} NOT NULL
        )
        """,
        // The anchors' own head, and the anchoring turn: only anchoring writes it.
        """
        CREATE TABLE audit_anchor_head (
            id {int} PRIMARY KEY,
            seq {int} NOT NULL,
            hash {blob} NOT NULL
        )
        """,
        "INSERT INTO audit_anchor_head (id, seq, hash) VALUES (1, 0, {genesis})",
        // Each chain's position in the newest anchor that names it; only anchoring writes it, so an
        // anchor never takes a lock an append waits for.
        """
        CREATE TABLE audit_anchored (
            account TEXT PRIMARY KEY,
            chain_position {int} NOT NULL
        )
        """,
        // SQLite: the append writes the account's head itself; the single head stops moving.
        "{sqlite}DROP TRIGGER audit_events_head",
        // PostgreSQL: sequences from a sequence (no row to wait on), gaps allowed.
        "{postgres}CREATE SEQUENCE audit_events_seq",
        "{postgres}SELECT setval('audit_events_seq', (SELECT COALESCE(MAX(seq), 0) + 1 FROM audit_events), false)",
        // The account's head moves (inserted on its first row) and locks that account's head alone until
        // the commit: appends of one account queue there, those of others do not.
        """
        {postgres}CREATE OR REPLACE FUNCTION audit_chain_append() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            head RECORD;
        BEGIN
            INSERT INTO audit_chain_heads AS h (account, chain_position, previous_hash, hash)
            VALUES (NEW.account, 1, {genesis}, sha256({genesis} || NEW.encoding))
            ON CONFLICT (account) DO UPDATE
                SET chain_position = h.chain_position + 1, previous_hash = h.hash, hash = sha256(h.hash || NEW.encoding)
            RETURNING chain_position, previous_hash, hash INTO head;
            INSERT INTO audit_events (seq, at, account, event, request_id, detail, previous_hash, hash, chain_position)
            VALUES (
                nextval('audit_events_seq'), NEW.at, NEW.account, NEW.event, NEW.request_id, NEW.detail,
                head.previous_hash, head.hash, head.chain_position);
            DELETE FROM audit_pending WHERE id = NEW.id;
            RETURN NULL;
        END
        $$
        """,
    ]
}
