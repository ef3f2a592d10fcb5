import ShareCrypto
import ShareRecovery

/// A mutating request's claim on its `Idempotency-Key` (docs/server.md, "Idempotent requests"): set
/// by ``IdempotencyMiddleware`` for the duration of the request, and written by every write
/// transaction the request runs, inside that transaction. So the key is taken in the same commit as
/// the change it guards, and no transaction of its own is spent on taking it; a key that another
/// request took first fails the transaction instead, and the change is rolled back.
struct IdempotencyClaim: Sendable {
    let scope: String
    let key: String
    /// A keyed hash of the request's method, path and body.
    let fingerprint: [UInt8]
    /// The scope and fingerprint under each further master key (docs/server.md, "Rotating the master
    /// key"): where a process that seals under another key kept the key's answer. Only looked at.
    var earlier: [(scope: String, fingerprint: [UInt8])] = []
    /// This request's own mark on the row: another request's claim writes another.
    let owner: String
    /// When the request began: a key whose retention ended before it is free to take.
    let now: Int64
    /// Until when the request is presumed alive once it has changed something: before, a repeat is
    /// told it is in progress; after, that its answer was lost.
    let leaseUntil: Int64
    /// How long an applied key is kept (its answer's retention).
    let keepUntil: Int64
    /// Whether a transaction of this request wrote the claim (shared by the copies the transaction
    /// groups carry). Set even if that transaction then rolled back: it only spares the requests that
    /// never wrote a statement to end their claim.
    let written = Locked(false)

    /// Whether a transaction of this request wrote the claim (``written``).
    var isWritten: Bool { written.withLock { $0 } }

    /// The claim of the request this task serves, if it sent a key.
    @TaskLocal static var current: IdempotencyClaim?

    /// Takes the key for this request in `transaction`, the transaction of the change: a new row, this
    /// request's own row again (a second transaction), or a row whose retention is over.
    /// - Throws: `StorageRefusal.idempotencyKeyTaken` when the key is another request's.
    func markApplied(in transaction: any SQLTransaction) async throws {
        let rows = try await transaction.query(
            """
            INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, owner, state, lease_until, expires_at)
            VALUES (?, ?, ?, ?, 'applied', ?, ?) ON CONFLICT (scope, idempotency_key) DO UPDATE SET
            fingerprint = excluded.fingerprint, owner = excluded.owner, state = 'applied', status = NULL,
            content_type = NULL, sealed_body = NULL, lease_until = excluded.lease_until, expires_at = excluded.expires_at
            WHERE idempotency_keys.owner = excluded.owner OR idempotency_keys.expires_at <= ? RETURNING owner
            """, .text(scope), .text(key), .blob(fingerprint), .text(owner), .integer(leaseUntil), .integer(keepUntil),
            .integer(now))
        guard !rows.isEmpty else { throw StorageRefusal.idempotencyKeyTaken }
        written.withLock { $0 = true }
    }
}

/// What became of a key, looked at before its request runs.
enum IdempotencyKeyState: Sendable {
    /// No request changed anything under the key (or its answer's retention is over): run.
    case free
    /// The key's request finished: answer with its stored response (the body still sealed).
    case replay(status: Int, contentType: String?, sealedBody: [UInt8])
    /// The key was used for another request (another method, path or body).
    case mismatch
    /// The key's request changed something and is still running.
    case inProgress
    /// The key's request changed something and its lease is over, but its answer was not kept (the
    /// server stopped between the change and the answer).
    case answerLost
}

extension ServerStorage {
    /// Reads what became of a key. Only a read: the key is taken by the request's first write
    /// transaction (``IdempotencyClaim/markApplied(in:)``), so a request that changes nothing never
    /// writes its key.
    /// - Parameters:
    ///   - scope: Whose keys these are (a keyed hash of the request's credentials).
    ///   - fingerprint: A keyed hash of the method, path and body.
    func idempotencyKeyState(scope: String, key: String, fingerprint: [UInt8], now: Int64) async throws
        -> IdempotencyKeyState
    {
        guard
            let row = try await read({ transaction in
                try await transaction.query(
                    """
                    SELECT fingerprint, state, status, content_type, sealed_body, lease_until, expires_at FROM idempotency_keys
                    WHERE scope = ? AND idempotency_key = ?
                    """, .text(scope), .text(key)
                ).first
            })
        else { return .free }
        // Past its retention (or, for a `started` claim of an earlier server version, its lease) the
        // key is free again.
        if try row.integer("expires_at") <= now { return .free }
        guard try row.blob("fingerprint") == fingerprint else { return .mismatch }
        switch try row.text("state") {
        case "done":
            return .replay(
                status: Int(try row.integer("status")), contentType: try row.optionalText("content_type"),
                sealedBody: try row.optionalBlob("sealed_body") ?? [])
        // Applied, answer not yet kept: still running within its lease (a repeat waits), or lost.
        case "applied": return try row.integer("lease_until") <= now ? .answerLost : .inProgress
        default: return .inProgress
        }
    }

    /// Keeps a request's answer until the claim's `keepUntil`, if the request changed something (its
    /// claim was written).
    /// - Returns: Whether the answer was kept: not if the request never wrote its claim (its key stays
    ///   free), nor if the transaction that wrote it rolled back (the row is another request's, or
    ///   there is none).
    @discardableResult
    func finishIdempotencyKey(
        _ claim: IdempotencyClaim, status: Int, contentType: String?, sealedBody: [UInt8]
    ) async throws -> Bool {
        guard claim.isWritten else { return false }
        return try await !statementTransaction { transaction in
            try await transaction.query(
                """
                UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, sealed_body = ?, expires_at = ?
                WHERE scope = ? AND idempotency_key = ? AND owner = ? AND state = 'applied' RETURNING owner
                """, .integer(Int64(status)), contentType.map(SQLValue.text) ?? .null, .blob(sealedBody),
                .integer(claim.keepUntil), .text(claim.scope), .text(claim.key), .text(claim.owner))
        }.isEmpty
    }

    /// Frees a key whatever its request did: for a request that failed before any answer (malformed
    /// HTTP), and for a rate-limited one, whose only write was its counter (keeping such answers
    /// would let a client grow the table at the rate it can send). A repeat runs afresh.
    func releaseIdempotencyKey(_ claim: IdempotencyClaim) async throws {
        guard claim.isWritten else { return }
        try await statementTransaction { transaction -> Void in
            try await transaction.query(
                "DELETE FROM idempotency_keys WHERE scope = ? AND idempotency_key = ? AND owner = ?",
                .text(claim.scope), .text(claim.key), .text(claim.owner))
        }
    }
}
