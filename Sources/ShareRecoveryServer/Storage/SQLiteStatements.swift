#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
import ShareRecovery

/// SQLite's side of ``TransactionGroups``: `BEGIN IMMEDIATE` … `COMMIT` on the pool's single writer
/// connection, issued statement by statement (GRDB's `allowsUnsafeTransactions`), since GRDB runs a
/// transaction in one synchronous closure and the server's transactions are async.
///
/// `BEGIN IMMEDIATE` (which may wait for another process's writer, up to the busy timeout) and `COMMIT`
/// (the fsync) run on GRDB's queue, off the cooperative pool. The statements between them run on the
/// calling thread (``SQLiteStatements``).
struct SQLiteGroupTransactions: GroupTransactions {
    let pool: DatabasePool

    func inTransaction(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Void) async throws {
        try await pool.writeWithoutTransaction { db in
            // Never inherit a transaction a crashed predecessor left open.
            if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
            try db.execute(sql: "BEGIN IMMEDIATE")
        }
        do {
            try await body(SQLiteStatements(pool: pool))
            try await pool.writeWithoutTransaction { db in try db.execute(sql: "COMMIT") }
        } catch {
            try? await pool.writeWithoutTransaction { db in
                if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
            }
            throw error
        }
    }
}

/// The statements of an SQLite transaction, each run on the calling thread (GRDB's synchronous API),
/// where the async API would hop to a queue's thread and back for every statement:
/// - a write transaction's on the pool's writer connection, which belongs to the one group that runs,
///   so its serial queue is idle and takes the statement at once;
/// - a read's on one of the server's read-only connections (``SQLiteReaders``): a WAL reader never
///   waits for the writer.
struct SQLiteStatements: SQLTransaction {
    let dialect = SQLDialect.sqlite
    let pool: DatabasePool
    /// The read-only connection of a read (``ServerStorage/read(_:)``); `nil` for the writer.
    var reader: DatabaseQueue? = nil

    func query(_ sql: String, _ values: [SQLValue]) async throws -> [SQLRow] {
        try Self.run(sql, Self.arguments(values), on: pool, reader: reader)
    }

    func lock(_ key: String) async throws {}

    /// Synchronous, so that GRDB's synchronous overloads are the ones called (in an async function its
    /// async ones win).
    private static func run(
        _ sql: String, _ arguments: StatementArguments, on pool: DatabasePool, reader: DatabaseQueue?
    )
        throws -> [SQLRow]
    {
        // A read is one statement outside a transaction (``ServerStorage/read(_:)``), SQLite's own
        // implicit read transaction.
        if let reader { return try reader.inDatabase { db in try fetch(db, sql, arguments) } }
        return try pool.writeWithoutTransaction { db in try fetch(db, sql, arguments) }
    }

    /// Cached statements: the server runs a handful of fixed statements, so each is prepared (and
    /// authorized) once per connection, not per request.
    static func fetch(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> [SQLRow] {
        let statement = try db.cachedStatement(sql: sql)
        // A statement without result columns (SAVEPOINT, RELEASE, an INSERT without RETURNING) runs in
        // one call that binds its text and blobs without copying them, and builds no row cursor for
        // rows that cannot come: a group's every transaction runs two such statements, an audited one three.
        guard statement.columnCount > 0 else {
            try statement.execute(arguments: arguments)
            return []
        }
        return try Row.fetchAll(statement, arguments: arguments).map(row)
    }

    /// Through GRDB's initializer over optional existentials: its initializer over a sequence of
    /// concrete values maps them with a key path, which an unspecialised generic call runs slowly
    /// (3 % of the server's samples in the profile, docs/server-design.md "Throughput").
    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(values.map { databaseValue($0) as (any DatabaseValueConvertible)? })
    }

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
            // The server's statements name their columns in lower case already: no new string for those.
            columns[
                name.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
                    ? name.lowercased() : name] =
                converted
        }
        return SQLRow(columns)
    }
}
