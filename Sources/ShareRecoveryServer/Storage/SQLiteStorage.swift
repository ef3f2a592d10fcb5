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
/// async; so a transaction here is `BEGIN IMMEDIATE` … `COMMIT` issued statement by statement on the
/// pool's single writer connection (GRDB's `allowsUnsafeTransactions`), with an in-process queue that
/// gives the writer to one transaction at a time. `BEGIN IMMEDIATE` with a busy timeout serialises
/// writers of other processes on the same file.
package final class SQLiteStorage: ServerStorage {
    package let dialect = SQLDialect.sqlite
    private let pool: DatabasePool
    private let writerQueue = AsyncQueue()

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
        } catch let error as DatabaseError {
            throw ServerStartError(
                .databaseUnavailable,
                "cannot open or create the SQLite database \(path) (SQLite: \(error.message ?? "error \(error.resultCode.rawValue)")): "
                    + "check that its directory exists and that this user may write to it")
        }
    }

    package func migrate() async throws {
        try await transaction { transaction in try await Migrations.apply(in: transaction, dialect: .sqlite) }
    }

    package func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        let pool = self.pool
        let queue = writerQueue
        // An unstructured task: the caller's cancellation must not stop us between BEGIN and COMMIT/ROLLBACK.
        return try await Task {
            try await queue.run {
                try await pool.writeWithoutTransaction { db in
                    // Never inherit a transaction a crashed predecessor left open.
                    if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
                    try db.execute(sql: "BEGIN IMMEDIATE")
                }
                do {
                    let transaction = SQLiteTransaction(pool: pool)
                    let result = try await body(transaction)
                    // The request's Idempotency-Key is marked used in the commit of its change.
                    try await IdempotencyClaim.current?.markApplied(in: transaction)
                    try await pool.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
                    return result
                } catch {
                    try? await pool.writeWithoutTransaction { db in
                        if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
                    }
                    throw error
                }
            }
        }.value
    }

    package func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws
        -> Result
    {
        try await body(SQLiteReader(pool: pool))
    }

    package func close() async {
        try? pool.close()
    }
}

/// The statements of an SQLite transaction, each run on the pool's writer connection.
private struct SQLiteTransaction: SQLTransaction {
    let pool: DatabasePool

    func query(_ sql: String, _ values: [SQLValue]) async throws -> [SQLRow] {
        let arguments = StatementArguments(values.map(Self.databaseValue))
        return try await pool.writeWithoutTransaction { db in try Self.fetch(db, sql, arguments) }
    }

    /// Cached statements: the server runs a handful of fixed statements, so each is prepared (and
    /// authorized) once per connection, not per request.
    static func fetch(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [SQLRow] {
        try Row.fetchAll(try db.cachedStatement(sql: sql), arguments: arguments).map(row)
    }

    func lock(_ key: String) async throws {}

    static func databaseValue(_ value: SQLValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        }
    }

    static func row(_ row: Row) -> SQLRow {
        var columns: [String: SQLValue] = [:]
        for (name, value) in row {
            let converted: SQLValue =
                switch value.storage {
                case .null: .null
                case .int64(let number): .integer(number)
                case .double(let number): .integer(Int64(number))
                case .string(let text): .text(text)
                case .blob(let data): .blob(Array(data))
                }
            columns[name.lowercased()] = converted
        }
        return SQLRow(columns)
    }
}

/// Read-only statements on the pool's reader connections.
private struct SQLiteReader: SQLTransaction {
    let pool: DatabasePool

    func query(_ sql: String, _ values: [SQLValue]) async throws -> [SQLRow] {
        let arguments = StatementArguments(values.map(SQLiteTransaction.databaseValue))
        return try await pool.read { db in try SQLiteTransaction.fetch(db, sql, arguments) }
    }

    func lock(_ key: String) async throws {}
}

/// Runs async jobs one at a time, in arrival order.
package actor AsyncQueue {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    package init() {}

    package func run<Result: Sendable>(_ job: @Sendable () async throws -> Result) async throws -> Result {
        if busy {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
        return try await job()
    }
}
