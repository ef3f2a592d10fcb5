import ShareCrypto
import ShareRecovery

/// The anchors of the audit trail (`audit_anchors`, AuditAnchorRecord.swift): written now and then by
/// whichever server gets the turn, never by a request.
extension ServerStorage {
    /// Writes one anchor over the chains whose heads moved since the previous anchor (at most
    /// ``AuditAnchorRecord/maximumChains`` of them), if any moved and this server has the turn.
    ///
    /// The turn is the anchors' own head row, taken with `FOR UPDATE SKIP LOCKED` on PostgreSQL: a
    /// server that finds it taken skips this round instead of waiting. The heads are read, not locked
    /// (one statement, one snapshot, each head committed with its row), so no append waits for an
    /// anchor and no anchor waits for an append.
    /// - Parameter at: The anchor's time, Unix seconds.
    /// - Returns: Whether an anchor was written (`false`: nothing moved, or another server had the turn).
    @discardableResult
    func writeAuditAnchor(at: Int64) async throws -> Bool {
        try await transaction { transaction in
            let skipLocked = transaction.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
            guard
                let head = try await transaction.query(
                    "SELECT seq, hash FROM audit_anchor_head WHERE id = 1\(skipLocked)"
                ).first
            else { return false }
            let sequence = try head.integer("seq") + 1
            let moved = try await transaction.query(
                """
                SELECT h.account, h.chain_position, h.hash FROM audit_chain_heads h
                LEFT JOIN audit_anchored a ON a.account = h.account
                WHERE a.account IS NULL OR a.chain_position <> h.chain_position
                ORDER BY h.account LIMIT ?
                """, .integer(Int64(AuditAnchorRecord.maximumChains))
            ).map { row in
                AuditAnchorRecord.Head(
                    account: try row.text("account"), position: try row.integer("chain_position"),
                    hash: try row.blob("hash"))
            }
            // The first anchor also commits to the chain written before the per-account chains.
            var legacy: AuditAnchor?
            if sequence == 1,
                let newest = try await transaction.query(
                    "SELECT seq, hash FROM audit_events WHERE chain_position IS NULL ORDER BY seq DESC LIMIT 1"
                ).first
            {
                legacy = AuditAnchor(sequence: try newest.integer("seq"), hash: try newest.blob("hash"))
            }
            guard legacy != nil || !moved.isEmpty else { return false }
            let heads = AuditAnchorRecord(legacy: legacy, chains: moved).text
            let previous = try head.blob("hash")
            let hash = AuditAnchorRecord.hash(previous: previous, at: at, heads: heads)
            try await transaction.query(
                "INSERT INTO audit_anchors (seq, at, heads, previous_hash, hash) VALUES (?, ?, ?, ?, ?)",
                .integer(sequence), .integer(at), .text(heads), .blob(previous), .blob(hash))
            try await transaction.query(
                "UPDATE audit_anchor_head SET seq = ?, hash = ? WHERE id = 1", .integer(sequence), .blob(hash))
            for start in stride(from: 0, to: moved.count, by: 200) {
                let chunk = moved[start..<min(start + 200, moved.count)]
                try await transaction.query(
                    """
                    INSERT INTO audit_anchored (account, chain_position)
                    VALUES \(repeatElement("(?, ?)", count: chunk.count).joined(separator: ", "))
                    ON CONFLICT (account) DO UPDATE SET chain_position = excluded.chain_position
                    """, chunk.flatMap { [SQLValue.text($0.account), .integer($0.position)] })
            }
            return true
        }
    }

    /// The anchors after `sequence`, oldest first, at most `limit`, each read as an ``AuditRow`` whose
    /// `detail` holds its heads text.
    func auditAnchors(after sequence: Int64, limit: Int) async throws -> [AuditRow] {
        try await read { transaction in
            try await transaction.query(
                "SELECT seq, at, heads, previous_hash, hash FROM audit_anchors WHERE seq > ? ORDER BY seq LIMIT ?",
                .integer(sequence),
                .integer(Int64(limit))
            ).map { row in
                AuditRow(
                    sequence: try row.integer("seq"), at: try row.integer("at"), account: "", event: "anchor",
                    requestId: "", detail: try row.text("heads"), previousHash: try row.blob("previous_hash"),
                    hash: try row.blob("hash"))
            }
        }
    }

    /// The anchors' own head: the newest anchor's sequence and hash (0 before the first anchor).
    func auditAnchorHead() async throws -> AuditAnchor? {
        try await read { transaction in
            try await transaction.query("SELECT seq, hash FROM audit_anchor_head WHERE id = 1").first.map { row in
                AuditAnchor(chain: .anchors, sequence: try row.integer("seq"), hash: try row.blob("hash"))
            }
        }
    }

    /// Every account chain's head record: its newest row's position and hash, by account.
    func auditChainHeads() async throws -> [String: AuditAnchor] {
        try await read { transaction in
            var heads: [String: AuditAnchor] = [:]
            for row in try await transaction.query("SELECT account, chain_position, hash FROM audit_chain_heads") {
                let account = try row.text("account")
                heads[account] = AuditAnchor(
                    chain: .account(account), sequence: try row.integer("chain_position"), hash: try row.blob("hash"))
            }
            return heads
        }
    }
}
