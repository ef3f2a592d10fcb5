import ShareCrypto
import ShareRecovery

/// The integrator's store of custodian backup shares (the webhooks).
extension ServerStorage {
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
}
