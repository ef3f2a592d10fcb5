import ShareCrypto
import ShareRecovery

/// The integrator API's cipherTexts, one per user and method.
extension ServerStorage {
    /// Stores a cipherText, spending the token in the same transaction, with its audit row:
    /// `methodAdded`, or `methodRotated` when it replaces the method's cipherText.
    func putCipherText(_ text: String, userId: String, method: BackupMethod, token: Token, origin: AuditOrigin)
        async throws -> SingleUseWrite
    {
        let now = origin.at
        return try await transaction { transaction in
            guard try await Self.spend(token, in: transaction) else { return .tokenSpent }
            // Serialises writes of the user's cipherTexts, so added and rotated are told apart exactly.
            try await transaction.lock("cipher texts \(userId)")
            let existing = try await transaction.query(
                "SELECT method FROM cipher_texts WHERE user_id = ? AND method = ?", .text(userId), .text(method.name))
            try await transaction.query(
                """
                INSERT INTO cipher_texts (user_id, method, cipher_text, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (user_id, method) DO UPDATE SET cipher_text = excluded.cipher_text, updated_at = excluded.updated_at
                """,
                .text(userId), .text(method.name), .text(text), .integer(now))
            try await Self.appendAudit(
                [
                    origin.event(existing.isEmpty ? .methodAdded : .methodRotated, account: userId) {
                        $0.method = method
                    }
                ],
                in: transaction)
            return .done
        }
    }

    /// The cipherText, served only once its `cipherTextRead` row is committed (``auditedRead(_:audit:)``):
    /// nothing is served unrecorded.
    func readCipherText(userId: String, method: BackupMethod, origin: AuditOrigin) async throws -> String? {
        let event = origin.event(.cipherTextRead, account: userId) { $0.method = method }
        return try await auditedRead { transaction in
            try await transaction.query(
                "SELECT cipher_text FROM cipher_texts WHERE user_id = ? AND method = ?", .text(userId),
                .text(method.name)
            ).first?.text("cipher_text")
        } audit: { text in
            text == nil ? [] : [event]
        }
    }

    /// Deletes a cipherText, spending the token only when there was one to delete, with its
    /// `methodDeleted` row.
    /// - Throws: `StorageRefusal.operationInProgress` while a backup or recovery of the user runs (the token stays
    ///   unspent), checked under the account's lock like the opening of a session.
    func deleteCipherText(userId: String, method: BackupMethod, token: Token, origin: AuditOrigin) async throws
        -> SingleUseWrite
    {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            let spent = try await transaction.query(
                "SELECT token_id FROM spent_tokens WHERE token_id = ?", .text(token.id))
            guard spent.isEmpty else { return .tokenSpent }
            if let running = try await Self.runningOperation(of: userId, now: origin.at, in: transaction) {
                throw running
            }
            let existing = try await transaction.query(
                "SELECT user_id FROM cipher_texts WHERE user_id = ? AND method = ?\(forUpdate)", .text(userId),
                .text(method.name))
            guard !existing.isEmpty else { return .notFound }
            guard try await Self.spend(token, in: transaction) else { return .tokenSpent }
            try await transaction.query(
                "DELETE FROM cipher_texts WHERE user_id = ? AND method = ?", .text(userId), .text(method.name))
            try await Self.appendAudit(
                [origin.event(.methodDeleted, account: userId) { $0.method = method }], in: transaction)
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
    static func spend(_ token: Token, in transaction: any SQLTransaction) async throws -> Bool {
        let inserted = try await transaction.query(
            "INSERT INTO spent_tokens (token_id, expires_at) VALUES (?, ?) ON CONFLICT (token_id) DO NOTHING RETURNING token_id",
            .text(token.id), .integer(token.expiresAt))
        return !inserted.isEmpty
    }
}
