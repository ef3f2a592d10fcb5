import ShareRecovery

/// One backup, recovery or method deletion per account at a time (docs/server.md, "One at a time per
/// account"), across every server of one database. A backup or recovery runs as long as its resharing
/// session is open or finished and not expired; opening another session and deleting a method's
/// cipherText or custodian backup shares are refused meanwhile, since a running recovery may be about
/// to read them and a running backup may be about to store them.
extension ServerStorage {
    /// Takes the account's lock for the rest of `transaction` (a PostgreSQL advisory lock; SQLite's one
    /// writer already is one) and says whether a backup or recovery of the account is running. Call it before any other lock of the
    /// transaction, so every holder takes the account's lock first and no lock-order cycle can form.
    /// - Returns: `operationInProgress` while one runs, else `nil`.
    /// - Parameters:
    ///   - clientId: The account (the integrator's user id is the custodian's client id).
    ///   - now: The request's time; an expired session no longer counts.
    static func runningOperation(of clientId: String, now: Int64, in transaction: any SQLTransaction) async throws
        -> StorageRefusal?
    {
        try await transaction.lock("resharing \(clientId)")
        let running = try await transaction.query(
            """
            SELECT expires_at FROM protocol_sessions
            WHERE client_id = ? AND protocol = 'resharing' AND state IN ('open', 'finished') AND expires_at > ?
            ORDER BY expires_at DESC
            """,
            .text(clientId), .integer(now))
        guard let latest = running.first else { return nil }
        let seconds = max(try latest.integer("expires_at") - now, 1)
        return .operationInProgress(secondsLeft: seconds)
    }
}
