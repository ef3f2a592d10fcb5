import CoreMetrics
import Tracing

/// The server's storage, counted: every transaction and read holds `databaseInFlight` up while it
/// runs, so `/metrics` shows how much of the database (with PostgreSQL, of the connection pool) is in
/// use; the audit events a transaction appended are counted once it commits (``CommittedEvents``).
/// Each transaction and read is also a client span, `storage.transaction` or `storage.read`, with
/// `db.system.name` (`sqlite`, `postgresql`) and, for a transaction, the number of audit events it
/// committed (docs/server.md, "Tracing"); never a query or a value.
/// Everything else is the wrapped backend's.
struct MeteredStorage: ServerStorage {
    let base: any ServerStorage
    let metrics: ServerMetrics
    /// A batcher of its own where the backend has one: a batch commits through the storage its first
    /// caller called, so one batcher must never be shared by a counted and an uncounted storage.
    let auditBatches: AuditBatches?

    init(base: any ServerStorage, metrics: ServerMetrics) {
        self.base = base
        self.metrics = metrics
        auditBatches = base.auditBatches == nil ? nil : AuditBatches()
    }

    var dialect: SQLDialect { base.dialect }

    func migrate() async throws { try await base.migrate() }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws -> Result
    {
        try await counted { try await base.transaction(body) }
    }

    func statementTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await counted { try await base.statementTransaction(body) }
    }

    /// A transaction's span, its in-flight count, and its audit events counted once it commits.
    private func counted<Result: Sendable>(_ run: () async throws -> Result) async throws -> Result {
        try await withSpan("storage.transaction", ofKind: .client) { span in
            metrics.databaseInFlight.increment()
            defer { metrics.databaseInFlight.decrement() }
            if span.isRecording { span.attributes["db.system.name"] = databaseSystem }
            let appended = CommittedEvents()
            let result = try await CommittedEvents.$current.withValue(appended) { try await run() }
            // Reached only when the transaction committed.
            let committed = appended.all
            metrics.committed(committed)
            if span.isRecording { span.attributes["share_recovery.audit_events"] = committed.count }
            return result
        }
    }

    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws
        -> Result
    {
        try await withSpan("storage.read", ofKind: .client) { span in
            metrics.databaseInFlight.increment()
            defer { metrics.databaseInFlight.decrement() }
            if span.isRecording { span.attributes["db.system.name"] = databaseSystem }
            return try await base.read(body)
        }
    }

    /// OpenTelemetry's `db.system.name` of the backend.
    private var databaseSystem: String {
        switch base.dialect {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }

    func close() async { await base.close() }
}
