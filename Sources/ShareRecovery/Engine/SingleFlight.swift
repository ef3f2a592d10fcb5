import ShareCrypto

/// At most one recovery, backup or method change per wallet at a time in this process: the wallet
/// is the device's share store object, whichever engine holds it. Across processes the store's own
/// lock does the same (``FileSigningShareStore`` holds its directory with `flock`), and across
/// devices the custodian refuses a second resharing session for the account. A second attempt
/// fails at once with ``ShareRecoveryError/Code/operationInProgress``: it never waits, so a retry
/// loop in an app cannot pile up behind a stuck one.
enum SingleFlight {
    /// The store objects with an operation running, and which one.
    /// (The project's `Locked`, not `Synchronization.Mutex`: ThreadSanitizer reported a Swift access
    /// race on a global `Mutex` here.)
    private static let running = Locked<[ObjectIdentifier: String]>([:])

    /// Runs `body` as the wallet's one operation.
    /// - Parameters:
    ///   - store: The wallet's share store. A store of value type has no identity to hold, so it
    ///     gets no in-process guard (the custodian's still applies).
    ///   - operation: What runs, for the error's reason ("recovery", "backup", "method deletion").
    /// - Throws: `operationInProgress` when the wallet has an operation running; else what `body` throws.
    static func run<T>(store: any SigningShareStore, operation: String, _ body: () async throws -> T) async throws -> T
    {
        guard type(of: store) is AnyObject.Type else { return try await body() }
        let key = ObjectIdentifier(store as AnyObject)
        let holder = running.withLock { running -> String? in
            if let holder = running[key] { return holder }
            running[key] = operation
            return nil
        }
        if let holder {
            throw ShareRecoveryError(
                .operationInProgress,
                "a \(holder) of this wallet is running in this process; retry \(operation) when it has finished")
        }
        defer { _ = running.withLock { $0.removeValue(forKey: key) } }
        return try await body()
    }
}
