#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
import ShareRecovery

/// ``ServerStorage`` on an SQLite file through a GRDB `DatabasePool` in WAL mode.
///
/// GRDB runs a transaction's statements in one synchronous closure, but the server's operations are
/// async; so a transaction here is issued statement by statement on the pool's single writer
/// connection (GRDB's `allowsUnsafeTransactions`), inside the `SAVEPOINT` of a group that
/// ``TransactionGroups`` begins with `BEGIN IMMEDIATE` and commits once for all of its transactions
/// (``SQLiteGroupTransactions``). `BEGIN IMMEDIATE` with a busy timeout serialises writers of other
/// processes on the same file.
package final class SQLiteStorage: ServerStorage {
    package let dialect = SQLDialect.sqlite
    private let pool: DatabasePool
    private let writer: TransactionGroups
    private let readers: SQLiteReaders

    /// Opens (creating if needed) the database file.
    /// - Parameter path: The SQLite file.
    /// - Throws: ``ServerStartError`` `databaseUnavailable` when the file cannot be opened or created.
    package init(path: String) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(30)
        configuration.allowsUnsafeTransactions = true
        configuration.label = "share-recovery-server"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // GRDB sets `synchronous = NORMAL` on a WAL pool's writer after `prepareDatabase` has run: a
            // commit then returns before the log reaches the disk, and a power cut may take the newest
            // commits with it. A recovery the server confirmed must survive that (docs/server.md,
            // "Storage"), so the writer, the only connection that commits, waits for the fsync.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            writer = TransactionGroups(backend: SQLiteGroupTransactions(pool: pool))
            // Reads run on connections of the server's own, not on the pool's readers.
            readers = try SQLiteReaders(path: path)
        } catch let error as DatabaseError {
            throw ServerStartError(
                .databaseUnavailable,
                "cannot open or create the SQLite database \(path) (SQLite: \(error.message ?? "error \(error.resultCode.rawValue)")): "
                    + "check that its directory exists and that this user may write to it")
        }
    }

    package func migrate() async throws {
        _ = try await transaction { transaction in try await Migrations.apply(in: transaction, dialect: .sqlite) }
    }

    package func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        // The body runs in the group's own task, so the caller's cancellation cannot stop it between
        // BEGIN and COMMIT/ROLLBACK.
        try await writer.run(body)
    }

    package func statementTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await transaction(body)
    }

    package func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws
        -> Result
    {
        try await body(SQLiteStatements(pool: pool, reader: readers.next()))
    }

    package var auditBatches: AuditBatches? { nil }

    package func close() async {
        readers.close()
        try? pool.close()
    }
}
