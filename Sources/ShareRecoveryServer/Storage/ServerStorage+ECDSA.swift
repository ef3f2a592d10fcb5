import ShareRecovery

/// The custodian's side of one device's ECDSA pair setup (docs/ecdsa.md, "Pair setup"), as a row of
/// `ecdsa_pair_setups`: sealed under the master key, bound to the set and its generation.
struct StoredPairSetup: Sendable {
    let setId: String
    let generation: UInt32
    let sealedSetup: [UInt8]
}

/// ECDSA pair setups and signing sessions with the custodian (docs/formats.md §12) in the session
/// store: a session's round state advances by compare-and-swap, so each is used once, and an abort
/// ends the session and deletes the set's pair setup in one transaction with its audit row.
extension ServerStorage {
    /// The custodian's pair setup for a set of the account, if one is kept.
    func ecdsaPairSetup(clientId: String, setId: String) async throws -> StoredPairSetup? {
        try await read { transaction in
            try await transaction.query(
                "SELECT set_id, generation, sealed_setup FROM ecdsa_pair_setups WHERE client_id = ? AND set_id = ?",
                .text(clientId), .text(setId)
            ).first.map { row in
                StoredPairSetup(
                    setId: try row.text("set_id"),
                    generation: UInt32(truncatingIfNeeded: try row.integer("generation")),
                    sealedSetup: try row.blob("sealed_setup"))
            }
        }
    }

    /// open → done for a pair setup session, keeping the setup in the same transaction (replacing the
    /// set's earlier one), with its audit row, while the set still signs for the account.
    /// - Returns: `false` when the session is no longer open (its round state was used).
    /// - Throws: `StorageRefusal.signingSetChanged` after a recovery or a device removal since it opened.
    func completePairSetup(id: String, clientId: String, setup: StoredPairSetup, now: Int64, made: AuditEvent)
        async throws -> Bool
    {
        try await transaction { transaction in
            guard try await Self.advance(transaction, id: id, now: now) else { return false }
            guard try await Self.currentSetIds(clientId: clientId, in: transaction).contains(setup.setId) else {
                throw StorageRefusal.signingSetChanged
            }
            try await transaction.query(
                """
                INSERT INTO ecdsa_pair_setups (client_id, set_id, generation, sealed_setup, created_at)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (client_id, set_id) DO UPDATE SET generation = excluded.generation,
                    sealed_setup = excluded.sealed_setup, created_at = excluded.created_at
                """,
                .text(clientId), .text(setup.setId), .integer(Int64(setup.generation)), .blob(setup.sealedSetup),
                .integer(now))
            try await Self.appendAudit([made], in: transaction)
            return true
        }
    }

    /// Round 2 of an ECDSA signature: open → finished with the next round state.
    /// - Returns: `false` when the session is no longer open (the round state was used).
    func advanceECDSASigning(id: String, sealedState: [UInt8], now: Int64) async throws -> Bool {
        try await transaction { transaction in
            try await Self.advance(transaction, id: id, from: .open, to: .finished, sealedState: sealedState, now: now)
        }
    }

    /// Ends an open ECDSA session whose round failed a check that discards nothing kept (a pair setup
    /// not yet made): its round state is deleted, so it is never used again.
    /// - Returns: `false` when the session had ended already.
    func endECDSASession(id: String, now: Int64) async throws -> Bool {
        try await transaction { transaction in try await Self.advance(transaction, id: id, now: now) }
    }

    /// Ends an ECDSA signing session on a failed check: the session is done (its round state deleted)
    /// and the set's pair setup is deleted, with the `ecdsaAborted` row, in one transaction. The setup
    /// goes even when the session had ended already: the device asks after a check of its own failed.
    /// - Returns: `false` when the session had ended already.
    func abortECDSASigning(id: String, clientId: String, setId: String, now: Int64, aborted: AuditEvent)
        async throws -> Bool
    {
        try await transaction { transaction in
            let ended = try await transaction.query(
                "UPDATE protocol_sessions SET state = 'done', sealed_state = ? WHERE id = ? AND state IN ('open', 'finished') RETURNING id",
                .blob([]), .text(id))
            try await Self.dropPairSetup(clientId: clientId, setId: setId, in: transaction)
            try await Self.appendAudit([aborted], in: transaction)
            return !ended.isEmpty
        }
    }

    /// Drops every pair setup of an account: its sets stop signing (a recovery, an eject).
    static func dropPairSetups(clientId: String, in transaction: any SQLTransaction) async throws {
        try await transaction.query("DELETE FROM ecdsa_pair_setups WHERE client_id = ?", .text(clientId))
    }

    /// Drops the pair setup of one set: it stops signing (a refresh), or an abort discarded it.
    static func dropPairSetup(clientId: String, setId: String, in transaction: any SQLTransaction) async throws {
        try await transaction.query(
            "DELETE FROM ecdsa_pair_setups WHERE client_id = ? AND set_id = ?", .text(clientId), .text(setId))
    }
}
