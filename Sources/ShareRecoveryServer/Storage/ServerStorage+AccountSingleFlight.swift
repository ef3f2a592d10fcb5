import ShareRecovery

/// One backup, recovery or method deletion per account at a time (docs/server.md, "One at a time per
/// account"), across every server of one database. A backup or recovery runs as long as its resharing
/// session is open or finished and not expired; opening another session and deleting a method's
/// cipherText or custodian backup shares are refused meanwhile, since a running recovery may be about
/// to read them and a running backup may be about to store them.
extension ServerStorage {
    /// Takes the account's lock for the rest of `transaction` (a PostgreSQL advisory lock; SQLite's one
    /// writer already is one) and says whether a backup or recovery of the account is running, or, with
    /// `kinds` naming them, an ECDSA pair setup or signing session. Call it before any other lock of
    /// the transaction, so every holder takes the account's lock first and no lock-order cycle can form.
    /// - Returns: `operationInProgress` while a resharing session runs, `ecdsaSessionInProgress` while
    ///   only an ECDSA one does, else `nil`.
    /// - Parameters:
    ///   - clientId: The account (the integrator's user id is the custodian's client id).
    ///   - now: The request's time; an expired session no longer counts.
    ///   - kinds: The kinds of session that count (a backup or recovery by default).
    ///   - superseding: A kind whose open sessions of the account end first, under the lock: a fresh
    ///     ECDSA pair setup replaces one its device never finished.
    static func runningOperation(
        of clientId: String, now: Int64, in transaction: any SQLTransaction,
        kinds: [ProtocolSessionRecord.Kind] = [.resharing], superseding: ProtocolSessionRecord.Kind? = nil
    ) async throws -> StorageRefusal? {
        try await transaction.lock("resharing \(clientId)")
        if let superseding {
            try await transaction.query(
                "UPDATE protocol_sessions SET state = 'done', sealed_state = ? WHERE client_id = ? AND protocol = ? AND state = 'open'",
                .blob([]), .text(clientId), .text(superseding.rawValue))
        }
        let placeholders = kinds.map { _ in "?" }.joined(separator: ", ")
        let running = try await transaction.query(
            """
            SELECT protocol, expires_at FROM protocol_sessions
            WHERE client_id = ? AND protocol IN (\(placeholders)) AND state IN ('open', 'finished') AND expires_at > ?
            ORDER BY expires_at DESC
            """,
            [.text(clientId)] + kinds.map { .text($0.rawValue) } + [.integer(now)])
        if let resharing = try running.first(where: { try $0.text("protocol") == "resharing" }) {
            return .operationInProgress(secondsLeft: max(try resharing.integer("expires_at") - now, 1))
        }
        guard let latest = running.first else { return nil }
        return .ecdsaSessionInProgress(secondsLeft: max(try latest.integer("expires_at") - now, 1))
    }
}
