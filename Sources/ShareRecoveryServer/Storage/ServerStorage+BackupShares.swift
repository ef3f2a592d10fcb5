import ShareCrypto
import ShareRecovery

/// The integrator's store of custodian backup shares (the webhooks).
extension ServerStorage {
    /// Keeps one share per (client, method, curve, party) of the newest set: a share of another set replaces
    /// every share of the same method and curve; the same share again changes nothing. Audited as
    /// `custodianShareStored`.
    func deliverBackupShare(_ share: CustodianBackupShare, json: String, clientId: String, origin: AuditOrigin)
        async throws
    {
        let now = origin.at
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
            try await Self.appendAudit(
                [
                    origin.event(.custodianShareStored, account: clientId) {
                        $0.method = share.backupMethod
                        $0.setId = share.setId.hex
                    }
                ], in: transaction)
        }
    }

    /// Every share of the client, served only once its `custodianSharesServed` row is committed
    /// (``auditedRead(_:audit:)``).
    func serveBackupShares(clientId: String, origin: AuditOrigin) async throws -> [String] {
        try await auditedRead { transaction in
            try await transaction.query(
                "SELECT share_json FROM backup_shares WHERE client_id = ? ORDER BY method, curve, party_index",
                .text(clientId)
            ).map { try $0.text("share_json") }
        } audit: { shares in
            [origin.event(.custodianSharesServed, account: clientId) { $0.count = shares.count }]
        }
    }

    /// Deletes the client's shares of a method, with a `custodianSharesDeleted` row.
    /// - Throws: `StorageRefusal.operationInProgress` while a backup or recovery of the client runs, checked under
    ///   the account's lock like the opening of a session.
    func deleteBackupShares(clientId: String, method: BackupMethod, origin: AuditOrigin) async throws {
        try await transaction { transaction in
            if let running = try await Self.runningOperation(of: clientId, now: origin.at, in: transaction) {
                throw running
            }
            try await transaction.lock("backup shares \(clientId)")
            let deleted = try await transaction.query(
                "DELETE FROM backup_shares WHERE client_id = ? AND method = ? RETURNING party_index", .text(clientId),
                .text(method.name))
            try await Self.appendAudit(
                [
                    origin.event(.custodianSharesDeleted, account: clientId) {
                        $0.method = method
                        $0.count = deleted.count
                    }
                ], in: transaction)
        }
    }
}
