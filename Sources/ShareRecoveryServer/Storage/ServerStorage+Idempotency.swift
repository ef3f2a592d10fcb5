import HTTPTypes
import ShareRecovery

/// A mutating request's claim on its `Idempotency-Key` (docs/server.md, "Idempotent requests"): set
/// by ``IdempotencyMiddleware`` for the duration of the request, and marked *applied* by every write
/// transaction the request runs, inside that transaction. So the key is recorded as used in the same
/// commit as the change it made; a claim that another request took over (its lease ran out) fails
/// the transaction instead, and the change is rolled back.
struct IdempotencyClaim: Sendable {
    let scope: String
    let key: String
    /// This request's own mark on the row: a takeover writes another.
    let owner: String
    /// How long an applied key is kept (its answer's retention).
    let keepUntil: Int64

    /// The claim of the request this task serves, if it sent a key.
    @TaskLocal static var current: IdempotencyClaim?

    /// Marks the key applied in `transaction`, the transaction of the change.
    /// - Throws: 409 `requestInProgress` when the row is no longer this request's.
    func markApplied(in transaction: any SQLTransaction) async throws {
        let rows = try await transaction.query(
            """
            UPDATE idempotency_keys SET state = 'applied', expires_at = ?
            WHERE scope = ? AND idempotency_key = ? AND owner = ? RETURNING owner
            """, .integer(keepUntil), .text(scope), .text(key), .text(owner))
        guard !rows.isEmpty else {
            throw APIError(.conflict, .requestInProgress, "another request with this Idempotency-Key took it over")
        }
    }
}

/// What a request finds when it claims its key.
enum IdempotencyReservation: Sendable {
    /// The key is this request's: run it.
    case proceed
    /// The key's request finished: answer with its stored response (the body still sealed).
    case replay(status: Int, contentType: String?, sealedBody: [UInt8])
    /// The key was used for another request (another method, path or body).
    case mismatch
    /// The key's first request is still running.
    case inProgress
    /// The key's request changed something and its lease is over, but its answer was not kept (the
    /// server stopped between the change and the answer).
    case answerLost
}

extension ServerStorage {
    /// Claims a key for a request, or says what became of it.
    /// - Parameters:
    ///   - scope: Whose keys these are (a keyed hash of the request's credentials).
    ///   - fingerprint: A keyed hash of the method, path and body.
    ///   - owner: This request's mark.
    ///   - leaseUntil: Until when the request is presumed alive: before, a repeat is told it is in
    ///     progress; after, an unapplied claim may be taken over, and an applied one without an answer
    ///     is reported as such.
    func reserveIdempotencyKey(
        scope: String, key: String, fingerprint: [UInt8], owner: String, now: Int64, leaseUntil: Int64
    ) async throws -> IdempotencyReservation {
        // A fresh key, the common case, is one statement committed on its own; a key seen before is
        // looked at under its row's lock.
        let claim = { @Sendable (transaction: any SQLTransaction) in
            try await transaction.query(
                """
                INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, owner, state, lease_until, expires_at)
                VALUES (?, ?, ?, ?, 'started', ?, ?) ON CONFLICT (scope, idempotency_key) DO NOTHING RETURNING owner
                """, .text(scope), .text(key), .blob(fingerprint), .text(owner), .integer(leaseUntil), .integer(leaseUntil))
        }
        if try await !statementTransaction({ try await claim($0) }).isEmpty { return .proceed }
        let lock = forUpdate
        return try await transaction { transaction -> IdempotencyReservation in
            let inserted = try await claim(transaction)
            if !inserted.isEmpty { return .proceed }
            guard
                let row = try await transaction.query(
                    """
                    SELECT fingerprint, state, status, content_type, sealed_body, lease_until, expires_at FROM idempotency_keys
                    WHERE scope = ? AND idempotency_key = ?\(lock)
                    """, .text(scope), .text(key)
                ).first
            else { return .inProgress }  // deleted between the two statements: the client retries
            let state = try row.text("state")
            let leaseOver = try row.integer("lease_until") <= now
            if try row.integer("expires_at") <= now || (state == "started" && leaseOver) {
                // An answer past its retention, or a claim whose request died before changing
                // anything: the key is free again.
                try await transaction.query(
                    """
                    UPDATE idempotency_keys SET fingerprint = ?, owner = ?, state = 'started', status = NULL,
                    content_type = NULL, sealed_body = NULL, lease_until = ?, expires_at = ?
                    WHERE scope = ? AND idempotency_key = ?
                    """, .blob(fingerprint), .text(owner), .integer(leaseUntil), .integer(leaseUntil), .text(scope),
                    .text(key))
                return .proceed
            }
            guard try row.blob("fingerprint") == fingerprint else { return .mismatch }
            switch state {
            case "done":
                return .replay(
                    status: Int(try row.integer("status")), contentType: try row.optionalText("content_type"),
                    sealedBody: try row.optionalBlob("sealed_body") ?? [])
            // Applied, answer not yet kept: still running within its lease (a repeat waits), or lost.
            case "applied": return leaseOver ? .answerLost : .inProgress
            default: return .inProgress
            }
        }
    }

    /// Ends a request's claim: keeps its answer until the claim's `keepUntil` if the request changed
    /// something (its claim was marked applied), else frees the key, so that a request that changed
    /// nothing leaves no row and a repeat of it runs again.
    func finishIdempotencyKey(
        _ claim: IdempotencyClaim, status: Int, contentType: String?, sealedBody: [UInt8]
    ) async throws {
        // Two statements, each committed on its own: the second only touches a row still this
        // request's, which only this request changes.
        let kept = try await statementTransaction { transaction in
            try await transaction.query(
                """
                UPDATE idempotency_keys SET state = 'done', status = ?, content_type = ?, sealed_body = ?, expires_at = ?
                WHERE scope = ? AND idempotency_key = ? AND owner = ? AND state = 'applied' RETURNING owner
                """, .integer(Int64(status)), contentType.map(SQLValue.text) ?? .null, .blob(sealedBody),
                .integer(claim.keepUntil), .text(claim.scope), .text(claim.key), .text(claim.owner))
        }
        // Not applied: nothing changed, so nothing is worth keeping.
        if kept.isEmpty { try await releaseIdempotencyKey(claim) }
    }

    /// Frees a key whatever its request did: for a request that failed before any answer (malformed
    /// HTTP), and for a rate-limited one, whose only write was its counter (keeping such answers
    /// would let a client grow the table at the rate it can send). A repeat runs afresh.
    func releaseIdempotencyKey(_ claim: IdempotencyClaim) async throws {
        try await statementTransaction { transaction -> Void in
            try await transaction.query(
                "DELETE FROM idempotency_keys WHERE scope = ? AND idempotency_key = ? AND owner = ?",
                .text(claim.scope), .text(claim.key), .text(claim.owner))
        }
    }
}
