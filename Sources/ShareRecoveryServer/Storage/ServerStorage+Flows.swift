import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// An OTP flow row.
struct FlowRecord: Sendable {
    let id: String
    let identifier: String
    let purpose: TokenPurpose
    let codeHash: [UInt8]
    let expiresAt: Int64
}

/// What a verification attempt came to.
enum FlowVerification: Sendable {
    case verified(identifier: String, purpose: TokenPurpose)
    case wrongCode(remaining: Int)
    /// Expired, already used, or ended by this (fifth) wrong code.
    case ended(reason: String)
    case notFound
    case rateLimited
}

/// OTP flows and the rate limits that guard them.
extension ServerStorage {
    /// Counts one attempt in a fixed window; `false` when the limit is exceeded.
    private static func hit(
        _ bucket: String, _ limit: ServerConfiguration.RateLimit, now: Int64, in transaction: any SQLTransaction
    ) async throws -> Bool {
        let window = Int64(max(limit.windowSeconds, 1))
        let start = now - now % window
        let rows = try await transaction.query(
            """
            INSERT INTO rate_limits (bucket, window_start, hits) VALUES (?, ?, 1)
            ON CONFLICT (bucket) DO UPDATE SET
                hits = CASE WHEN rate_limits.window_start = excluded.window_start THEN rate_limits.hits + 1 ELSE 1 END,
                window_start = excluded.window_start
            RETURNING hits
            """,
            .text(bucket), .integer(start))
        guard let hits = try rows.first?.integer("hits") else { return false }
        return hits <= Int64(limit.limit)
    }

    /// Creates a flow unless the identifier or address is over its creation limit (`false`).
    func createFlow(_ flow: FlowRecord, address: String, limits: ServerConfiguration.RateLimits, now: Int64)
        async throws -> Bool
    {
        try await transaction { transaction in
            let byIdentifier = try await Self.hit(
                "create id \(flow.identifier)", limits.flowCreationPerIdentifier, now: now, in: transaction)
            let byAddress = try await Self.hit(
                "create ip \(address)", limits.flowCreationPerAddress, now: now, in: transaction)
            guard byIdentifier, byAddress else { return false }
            try await transaction.query(
                """
                INSERT INTO recovery_flows (id, identifier, purpose, code_hash, wrong_attempts, state, expires_at)
                VALUES (?, ?, ?, ?, 0, 'open', ?)
                """,
                .text(flow.id), .text(flow.identifier), .text(flow.purpose.rawValue), .blob(flow.codeHash),
                .integer(flow.expiresAt))
            return true
        }
    }

    /// One verification attempt: counts it against the address and identifier limits, then checks the code
    /// with `matches` (constant time) and records the outcome, all in one transaction, with its audit row:
    /// `tokenIssued` (for a token expiring `tokenLifetime` seconds after `origin.at`), `otpFailed` or
    /// `otpExhausted`.
    func verifyFlow(
        id: String, address: String, limits: ServerConfiguration.RateLimits, maximumWrongAttempts: Int,
        tokenLifetime: Int64, origin: AuditOrigin, matches: @escaping @Sendable ([UInt8]) -> Bool
    ) async throws -> FlowVerification {
        let now = origin.at
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            let rows = try await transaction.query(
                "SELECT identifier, purpose, code_hash, wrong_attempts, state, expires_at FROM recovery_flows WHERE id = ?\(forUpdate)",
                .text(id))
            var allowed = true
            if let row = rows.first {
                allowed = try await Self.hit(
                    "verify id \(try row.text("identifier"))", limits.verifyPerIdentifier, now: now, in: transaction)
            }
            allowed =
                try await Self.hit("verify ip \(address)", limits.verifyPerAddress, now: now, in: transaction)
                && allowed
            guard allowed else { return .rateLimited }
            guard let row = rows.first else { return .notFound }
            guard let purpose = TokenPurpose(rawValue: try row.text("purpose")) else {
                throw ShareRecoveryError(.storageFailure, "unknown flow purpose")
            }
            switch try row.text("state") {
            case "open": break
            case "verified": return .ended(reason: "the flow was already used")
            default: return .ended(reason: "the flow ended after too many wrong codes")
            }
            guard now < (try row.integer("expires_at")) else { return .ended(reason: "the flow has expired") }
            let identifier = try row.text("identifier")
            if matches(try row.blob("code_hash")) {
                try await transaction.query("UPDATE recovery_flows SET state = 'verified' WHERE id = ?", .text(id))
                try await Self.appendAudit(
                    [
                        origin.event(.tokenIssued, account: identifier) {
                            $0.flowId = id
                            $0.purpose = purpose
                            $0.expiresAt = now + tokenLifetime
                        }
                    ], in: transaction)
                return .verified(identifier: identifier, purpose: purpose)
            }
            let wrong = Int(try row.integer("wrong_attempts")) + 1
            if wrong >= maximumWrongAttempts {
                try await transaction.query(
                    "UPDATE recovery_flows SET wrong_attempts = ?, state = 'ended' WHERE id = ?",
                    .integer(Int64(wrong)), .text(id))
                try await Self.appendAudit(
                    [origin.event(.otpExhausted, account: identifier) { $0.flowId = id }], in: transaction)
                return .ended(reason: "too many wrong codes: the flow has ended")
            }
            try await transaction.query(
                "UPDATE recovery_flows SET wrong_attempts = ? WHERE id = ?", .integer(Int64(wrong)), .text(id))
            try await Self.appendAudit(
                [
                    origin.event(.otpFailed, account: identifier) {
                        $0.flowId = id
                        $0.remaining = maximumWrongAttempts - wrong
                    }
                ], in: transaction)
            return .wrongCode(remaining: maximumWrongAttempts - wrong)
        }
    }

    /// Deletes what can no longer matter: flows a day past expiry, spent ids of expired tokens, old rate-limit
    /// windows, expired sessions, idempotency keys past their retention.
    func purgeExpired(now: Int64) async throws {
        try await transaction { transaction -> Void in
            try await transaction.query("DELETE FROM recovery_flows WHERE expires_at < ?", .integer(now - 86_400))
            try await transaction.query("DELETE FROM spent_tokens WHERE expires_at < ?", .integer(now))
            try await transaction.query("DELETE FROM rate_limits WHERE window_start < ?", .integer(now - 86_400))
            try await transaction.query("DELETE FROM protocol_sessions WHERE expires_at < ?", .integer(now))
            try await transaction.query("DELETE FROM idempotency_keys WHERE expires_at < ?", .integer(now))
        }
    }
}
