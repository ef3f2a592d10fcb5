import ShareCrypto
import ShareRecovery

/// The custodian's signing share, sealed for its row.
struct SealedSigningShare: Sendable {
    let partyIndex: Int
    let setId: String
    let generation: UInt32
    let sealedRecord: [UInt8]
    /// When the custodian stored it (seconds, by the deciding clock); 0 when unknown (a row written by
    /// a release before share ages).
    var storedAt: Int64 = 0
}

/// The custodian's signing shares per client, sealed under the master key.
extension ServerStorage {
    /// Adds or replaces one party's signing share, stored at `now`; a share of another set first drops
    /// the old set. Audited as `walletRegistered`.
    func registerSigningShare(clientId: String, share: SealedSigningShare, now: Int64, origin: AuditOrigin)
        async throws
    {
        try await transaction { transaction in
            try await transaction.lock("signing shares \(clientId)")
            let replaced = try await transaction.query(
                "DELETE FROM signing_shares WHERE client_id = ? AND set_id <> ? RETURNING set_id", .text(clientId),
                .text(share.setId))
            // A new set replaces the wallet's: devices added from the old one stop signing too (docs/devices.md).
            if !replaced.isEmpty { try await Self.dropWalletDevices(clientId: clientId, in: transaction) }
            try await transaction.query(
                """
                INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record, stored_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (client_id, party_index)
                DO UPDATE SET set_id = excluded.set_id, generation = excluded.generation,
                    sealed_record = excluded.sealed_record, stored_at = excluded.stored_at
                """,
                .text(clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                .integer(Int64(share.generation)),
                .blob(share.sealedRecord), .integer(now))
            try await Self.appendAudit(
                [
                    origin.event(.walletRegistered, account: clientId) {
                        $0.setId = share.setId
                        $0.generation = share.generation
                    }
                ], in: transaction)
        }
    }

    func signingShares(clientId: String) async throws -> [SealedSigningShare] {
        try await read { transaction in
            try await transaction.query(
                "SELECT party_index, set_id, generation, sealed_record, stored_at FROM signing_shares WHERE client_id = ? ORDER BY party_index",
                .text(clientId)
            ).map { row in
                SealedSigningShare(
                    partyIndex: Int(try row.integer("party_index")), setId: try row.text("set_id"),
                    generation: UInt32(truncatingIfNeeded: try row.integer("generation")),
                    sealedRecord: try row.blob("sealed_record"), storedAt: try row.integer("stored_at"))
            }
        }
    }
}
