import ShareCrypto
import ShareRecovery

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

/// A resharing session row (FORMATS.md §3, custodian side).
struct SessionRecord: Sendable {
    /// `confirmed` rows keep no secrets; they stay until they expire so that a confirm retried after its
    /// answer was lost answers as the first one did.
    enum State: String, Sendable { case open, finished, confirmed }

    let id: String
    let clientId: String
    /// `backup` or `recovery`.
    let purpose: String
    /// The §6 method name.
    let method: String
    let state: State
    /// SessionWire JSON of the plan.
    let planJSON: String
    /// Public part of the custodian's dealings: `[{"dealerIndex", "commitments"}]`.
    let dealingsJSON: String
    /// The custodian's current signing set when the session opened ("" when none): confirm refuses if it moved.
    let expectedSet: String
    /// Session key and the custodian's sub-shares for its own new parties, sealed.
    let sealedSecrets: [UInt8]
    /// The custodian's new shares after finish (recovery), sealed.
    let sealedPending: [UInt8]?
    let expiresAt: Int64
}

/// The custodian's signing share, sealed for its row.
struct SealedSigningShare: Sendable {
    let partyIndex: Int
    let setId: String
    let generation: UInt32
    let sealedRecord: [UInt8]
}

/// Outcome of a single-use write.
enum SingleUseWrite: Sendable, Equatable {
    case done
    case notFound
    case tokenSpent
}

/// What deleting a resharing session did.
enum SessionDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// The session was confirmed: its new set is current, and there is nothing left to abandon.
    case confirmed
}

/// The server's operations, written once over ``ServerStorage/transaction(_:)`` for both backends.
extension ServerStorage {
    private var forUpdate: String { dialect == .postgres ? " FOR UPDATE" : "" }

    // MARK: Server keys

    /// The sealed key row, creating it with `create()` when absent (the first of several starting processes wins).
    func serverKey(
        name: String, create: @escaping @Sendable () throws -> (publicKey: [UInt8], sealed: [UInt8]), now: Int64
    ) async throws -> (publicKey: [UInt8], sealed: [UInt8]) {
        try await transaction { transaction in
            try await transaction.lock("server key \(name)")
            let rows = try await transaction.query(
                "SELECT public_key, sealed_secret FROM server_keys WHERE name = ?", .text(name))
            if let row = rows.first { return (try row.blob("public_key"), try row.blob("sealed_secret")) }
            let fresh = try create()
            try await transaction.query(
                "INSERT INTO server_keys (name, public_key, sealed_secret, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
                .text(name), .blob(fresh.publicKey), .blob(fresh.sealed), .integer(now))
            let stored = try await transaction.query(
                "SELECT public_key, sealed_secret FROM server_keys WHERE name = ?", .text(name))
            guard let row = stored.first else {
                throw ShareRecoveryError(.storageFailure, "the server key row vanished")
            }
            return (try row.blob("public_key"), try row.blob("sealed_secret"))
        }
    }

    // MARK: Cipher texts

    /// Stores a cipherText, spending the token in the same transaction.
    func putCipherText(_ text: String, userId: String, method: BackupMethod, token: Token, now: Int64) async throws
        -> SingleUseWrite
    {
        try await transaction { transaction in
            guard try await Self.spend(token, in: transaction) else { return .tokenSpent }
            try await transaction.query(
                """
                INSERT INTO cipher_texts (user_id, method, cipher_text, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id, method) DO UPDATE SET cipher_text = excluded.cipher_text, updated_at = excluded.updated_at
                """,
                .text(userId), .text(method.name), .text(text), .integer(now))
            return .done
        }
    }

    func cipherText(userId: String, method: BackupMethod) async throws -> String? {
        try await read { transaction in
            try await transaction.query(
                "SELECT cipher_text FROM cipher_texts WHERE user_id = ? AND method = ?", .text(userId),
                .text(method.name)
            ).first?.text("cipher_text")
        }
    }

    /// Deletes a cipherText, spending the token only when there was one to delete.
    func deleteCipherText(userId: String, method: BackupMethod, token: Token) async throws -> SingleUseWrite {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            let spent = try await transaction.query(
                "SELECT token_id FROM spent_tokens WHERE token_id = ?", .text(token.id))
            guard spent.isEmpty else { return .tokenSpent }
            let existing = try await transaction.query(
                "SELECT user_id FROM cipher_texts WHERE user_id = ? AND method = ?\(forUpdate)", .text(userId),
                .text(method.name))
            guard !existing.isEmpty else { return .notFound }
            guard try await Self.spend(token, in: transaction) else { return .tokenSpent }
            try await transaction.query(
                "DELETE FROM cipher_texts WHERE user_id = ? AND method = ?", .text(userId), .text(method.name))
            return .done
        }
    }

    func storedMethods(userId: String) async throws -> [BackupMethod] {
        try await read { transaction in
            try await transaction.query("SELECT method FROM cipher_texts WHERE user_id = ?", .text(userId))
                .compactMap { BackupMethod(name: try $0.text("method")) }
                .sorted { $0.rawValue < $1.rawValue }
        }
    }

    /// Records a single-use token as spent; `false` when it already was (also across servers).
    private static func spend(_ token: Token, in transaction: any SQLTransaction) async throws -> Bool {
        let inserted = try await transaction.query(
            "INSERT INTO spent_tokens (token_id, expires_at) VALUES (?, ?) ON CONFLICT (token_id) DO NOTHING RETURNING token_id",
            .text(token.id), .integer(token.expiresAt))
        return !inserted.isEmpty
    }

    // MARK: Custodian backup shares (integrator webhooks)

    /// Keeps one share per (client, method, curve, party) of the newest set: a share of another set replaces
    /// every share of the same method and curve; the same share again changes nothing.
    func deliverBackupShare(_ share: CustodianBackupShare, json: String, clientId: String, now: Int64) async throws {
        try await transaction { transaction in
            try await transaction.lock("backup shares \(clientId)")
            try await transaction.query(
                "DELETE FROM backup_shares WHERE client_id = ? AND method = ? AND curve = ? AND set_id <> ?",
                .text(clientId), .text(share.backupMethod.name), .text(share.curve.name), .text(share.setId.hex))
            try await transaction.query(
                """
                INSERT INTO backup_shares (client_id, method, curve, party_index, set_id, share_json, delivered_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (client_id, method, curve, party_index)
                DO UPDATE SET set_id = excluded.set_id, share_json = excluded.share_json, delivered_at = excluded.delivered_at
                """,
                .text(clientId), .text(share.backupMethod.name), .text(share.curve.name),
                .integer(Int64(share.partyIndex)),
                .text(share.setId.hex), .text(json), .integer(now))
        }
    }

    func backupShares(clientId: String) async throws -> [String] {
        try await read { transaction in
            try await transaction.query(
                "SELECT share_json FROM backup_shares WHERE client_id = ? ORDER BY method, curve, party_index",
                .text(clientId)
            ).map { try $0.text("share_json") }
        }
    }

    func deleteBackupShares(clientId: String, method: BackupMethod) async throws {
        try await transaction { transaction in
            try await transaction.lock("backup shares \(clientId)")
            try await transaction.query(
                "DELETE FROM backup_shares WHERE client_id = ? AND method = ?", .text(clientId), .text(method.name))
        }
    }

    // MARK: The custodian's signing shares

    /// Adds or replaces one party's signing share; a share of another set first drops the old set.
    func registerSigningShare(clientId: String, share: SealedSigningShare) async throws {
        try await transaction { transaction in
            try await transaction.lock("signing shares \(clientId)")
            try await transaction.query(
                "DELETE FROM signing_shares WHERE client_id = ? AND set_id <> ?", .text(clientId), .text(share.setId))
            try await transaction.query(
                """
                INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (client_id, party_index)
                DO UPDATE SET set_id = excluded.set_id, generation = excluded.generation, sealed_record = excluded.sealed_record
                """,
                .text(clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                .integer(Int64(share.generation)),
                .blob(share.sealedRecord))
        }
    }

    func signingShares(clientId: String) async throws -> [SealedSigningShare] {
        try await read { transaction in
            try await transaction.query(
                "SELECT party_index, set_id, generation, sealed_record FROM signing_shares WHERE client_id = ? ORDER BY party_index",
                .text(clientId)
            ).map { row in
                SealedSigningShare(
                    partyIndex: Int(try row.integer("party_index")), setId: try row.text("set_id"),
                    generation: UInt32(truncatingIfNeeded: try row.integer("generation")),
                    sealedRecord: try row.blob("sealed_record"))
            }
        }
    }

    // MARK: OTP flows and rate limits

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
    /// with `matches` (constant time) and records the outcome, all in one transaction.
    func verifyFlow(
        id: String, address: String, limits: ServerConfiguration.RateLimits, maximumWrongAttempts: Int, now: Int64,
        matches: @escaping @Sendable ([UInt8]) -> Bool
    ) async throws -> FlowVerification {
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
            if matches(try row.blob("code_hash")) {
                try await transaction.query("UPDATE recovery_flows SET state = 'verified' WHERE id = ?", .text(id))
                return .verified(identifier: try row.text("identifier"), purpose: purpose)
            }
            let wrong = Int(try row.integer("wrong_attempts")) + 1
            if wrong >= maximumWrongAttempts {
                try await transaction.query(
                    "UPDATE recovery_flows SET wrong_attempts = ?, state = 'ended' WHERE id = ?",
                    .integer(Int64(wrong)), .text(id))
                return .ended(reason: "too many wrong codes: the flow has ended")
            }
            try await transaction.query(
                "UPDATE recovery_flows SET wrong_attempts = ? WHERE id = ?", .integer(Int64(wrong)), .text(id))
            return .wrongCode(remaining: maximumWrongAttempts - wrong)
        }
    }

    /// Deletes what can no longer matter: flows a day past expiry, spent ids of expired tokens, old rate-limit
    /// windows, expired sessions.
    func purgeExpired(now: Int64) async throws {
        try await transaction { transaction -> Void in
            try await transaction.query("DELETE FROM recovery_flows WHERE expires_at < ?", .integer(now - 86_400))
            try await transaction.query("DELETE FROM spent_tokens WHERE expires_at < ?", .integer(now))
            try await transaction.query("DELETE FROM rate_limits WHERE window_start < ?", .integer(now - 86_400))
            try await transaction.query("DELETE FROM recovery_sessions WHERE expires_at < ?", .integer(now))
        }
    }

    // MARK: Resharing sessions

    func createSession(_ session: SessionRecord) async throws {
        try await transaction { transaction -> Void in
            try await transaction.query(
                """
                INSERT INTO recovery_sessions
                    (id, client_id, purpose, method, state, plan_json, dealings_json, expected_set, sealed_secrets, sealed_pending, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
                """,
                .text(session.id), .text(session.clientId), .text(session.purpose), .text(session.method),
                .text(session.state.rawValue), .text(session.planJSON), .text(session.dealingsJSON),
                .text(session.expectedSet),
                .blob(session.sealedSecrets), .integer(session.expiresAt))
        }
    }

    /// The session, unless missing or expired.
    func session(id: String, now: Int64) async throws -> SessionRecord? {
        try await read { transaction in
            guard let row = try await transaction.query("SELECT * FROM recovery_sessions WHERE id = ?", .text(id)).first
            else {
                return nil
            }
            let session = try Self.sessionRecord(row)
            return session.expiresAt > now ? session : nil
        }
    }

    /// open → finished, storing the pending shares; `false` when the session is no longer open.
    func finishSession(id: String, sealedPending: [UInt8]?, now: Int64) async throws -> Bool {
        try await transaction { transaction in
            let pending: SQLValue = sealedPending.map { .blob($0) } ?? .null
            return try await !transaction.query(
                "UPDATE recovery_sessions SET state = 'finished', sealed_pending = ? WHERE id = ? AND state = 'open' AND expires_at > ? RETURNING id",
                pending, .text(id), .integer(now)
            ).isEmpty
        }
    }

    /// Commits a finished session: for a recovery the new signing set replaces the old one, if the old one is
    /// still what the session was planned against. Confirming a confirmed session is done already.
    /// The row stays, as `confirmed` and without its sealed secrets, until it expires.
    func confirmSession(id: String, newShares: [SealedSigningShare]?, now: Int64) async throws -> SingleUseWrite {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT * FROM recovery_sessions WHERE id = ? AND expires_at > ?\(forUpdate)", .text(id),
                    .integer(now)
                ).first
            else { return .notFound }
            let session = try Self.sessionRecord(row)
            if session.state == .confirmed { return .done }
            guard session.state == .finished else { throw APIError.conflict("the session is not finished") }
            if let newShares {
                try await transaction.lock("signing shares \(session.clientId)")
                let current = try await transaction.query(
                    "SELECT DISTINCT set_id FROM signing_shares WHERE client_id = ?", .text(session.clientId)
                ).map { try $0.text("set_id") }
                guard current == (session.expectedSet.isEmpty ? [] : [session.expectedSet]) else {
                    throw APIError.conflict("the custodian's signing set changed since this session opened")
                }
                try await transaction.query("DELETE FROM signing_shares WHERE client_id = ?", .text(session.clientId))
                for share in newShares {
                    try await transaction.query(
                        "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record) VALUES (?, ?, ?, ?, ?)",
                        .text(session.clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                        .integer(Int64(share.generation)), .blob(share.sealedRecord))
                }
            }
            try await transaction.query(
                "UPDATE recovery_sessions SET state = 'confirmed', sealed_secrets = ?, sealed_pending = NULL WHERE id = ?",
                .blob([]), .text(id))
            return .done
        }
    }

    /// Deletes an open or finished session; a confirmed one stays.
    func deleteSession(id: String) async throws -> SessionDeletion {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT state FROM recovery_sessions WHERE id = ?\(forUpdate)", .text(id)
                ).first
            else { return .notFound }
            if try row.text("state") == SessionRecord.State.confirmed.rawValue { return .confirmed }
            try await transaction.query("DELETE FROM recovery_sessions WHERE id = ?", .text(id))
            return .deleted
        }
    }

    private static func sessionRecord(_ row: SQLRow) throws -> SessionRecord {
        guard let state = SessionRecord.State(rawValue: try row.text("state")) else {
            throw ShareRecoveryError(.storageFailure, "unknown session state")
        }
        return SessionRecord(
            id: try row.text("id"), clientId: try row.text("client_id"), purpose: try row.text("purpose"),
            method: try row.text("method"), state: state, planJSON: try row.text("plan_json"),
            dealingsJSON: try row.text("dealings_json"), expectedSet: try row.text("expected_set"),
            sealedSecrets: try row.blob("sealed_secrets"), sealedPending: try row.optionalBlob("sealed_pending"),
            expiresAt: try row.integer("expires_at"))
    }
}
