import CoreMetrics

/// The server's storage, counted: every transaction and read holds `databaseInFlight` up while it
/// runs, so `/metrics` shows how much of the database (with PostgreSQL, of the connection pool) is in
/// use; the audit events a transaction appended are counted once it commits (``CommittedEvents``).
/// Everything else is the wrapped backend's.
struct MeteredStorage: ServerStorage {
    let base: any ServerStorage
    let metrics: ServerMetrics

    var dialect: SQLDialect { base.dialect }

    func migrate() async throws { try await base.migrate() }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws -> Result
    {
        metrics.databaseInFlight.increment()
        defer { metrics.databaseInFlight.decrement() }
        let appended = CommittedEvents()
        let result = try await CommittedEvents.$current.withValue(appended) { try await base.transaction(body) }
        // Reached only when the transaction committed.
        metrics.committed(appended.all)
        return result
    }

    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws
        -> Result
    {
        metrics.databaseInFlight.increment()
        defer { metrics.databaseInFlight.decrement() }
        return try await base.read(body)
    }

    func close() async { await base.close() }
}
