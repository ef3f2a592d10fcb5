package import ShareRecovery

/// A value bound into, or read out of, an SQL statement. Only the four types every backend
/// agrees on: columns are `INTEGER`/`BIGINT`, `TEXT`, `BLOB`/`BYTEA`, and `NULL`.
package enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// One result row, by lower-case column name.
package struct SQLRow: Sendable {
    package let columns: [String: SQLValue]

    package init(_ columns: [String: SQLValue]) { self.columns = columns }

    /// A `TEXT` column; a missing or mistyped column is a storage failure (schema drift), never client input.
    package func text(_ name: String) throws(ShareRecoveryError) -> String {
        guard case .text(let value)? = columns[name] else { throw Self.mismatch(name, "text") }
        return value
    }

    package func optionalText(_ name: String) throws(ShareRecoveryError) -> String? {
        if case .null? = columns[name] { return nil }
        return try text(name)
    }

    package func integer(_ name: String) throws(ShareRecoveryError) -> Int64 {
        guard case .integer(let value)? = columns[name] else { throw Self.mismatch(name, "integer") }
        return value
    }

    package func blob(_ name: String) throws(ShareRecoveryError) -> [UInt8] {
        switch columns[name] {
        case .blob(let value)?: return value
        // SQLite hands back an empty BLOB as an empty value of either kind.
        case .text(let value)? where value.isEmpty: return []
        default: throw Self.mismatch(name, "blob")
        }
    }

    package func optionalBlob(_ name: String) throws(ShareRecoveryError) -> [UInt8]? {
        if case .null? = columns[name] { return nil }
        return try blob(name)
    }

    private static func mismatch(_ name: String, _ kind: String) -> ShareRecoveryError {
        ShareRecoveryError(.storageFailure, "column \(name) is missing or not \(kind)")
    }
}

/// The statements of one open transaction. Every multi-row change of the server runs inside one.
package protocol SQLTransaction: Sendable {
    /// The backend's SQL dialect, for the few statements written per dialect.
    var dialect: SQLDialect { get }

    /// Runs one statement with `?` placeholders and returns its rows (empty for statements without `RETURNING`).
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue]) async throws -> [SQLRow]

    /// Serialises this transaction against every other transaction that takes the same lock key, across
    /// processes, until commit or rollback. (SQLite transactions are already serial: a no-op there.)
    func lock(_ key: String) async throws
}

extension SQLTransaction {
    @discardableResult
    package func query(_ sql: String, _ values: SQLValue...) async throws -> [SQLRow] {
        try await query(sql, values)
    }
}

/// Which SQL the backend speaks, where the two differ: schema types, the audit chain's append
/// (ServerStorage+Audit.swift). Every other statement is written in the common subset of SQLite ≥ 3.35
/// and PostgreSQL ≥ 12 (`ON CONFLICT`, `RETURNING`).
package enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// Where the server keeps everything that must outlive a request: cipherTexts, custodian backup shares,
/// the custodian's encrypted keys and signing shares, OTP flows, spent token ids, rate-limit counters and
/// resharing sessions. Nothing that matters is kept in process memory, so several server processes on one
/// PostgreSQL database behave as one.
///
/// Implementations provide transactions and migrations; the server's operations (``ServerStorage`` extension
/// in `ServerStorage+Records.swift`) are written once on top of them.
package protocol ServerStorage: Sendable {
    /// The backend's SQL dialect.
    var dialect: SQLDialect { get }

    /// Creates or upgrades the schema; safe to run from several processes at once.
    func migrate() async throws

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws. The body is
    /// shielded from the caller's cancellation so a transaction never stays half-open.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws
        -> Result

    /// Runs `body`, which issues exactly one statement, as that statement's own transaction: committed
    /// when it returns. On PostgreSQL the statement runs alone, without the `BEGIN` and `COMMIT` round
    /// trips of ``transaction(_:)`` (a statement outside a transaction is one, its deferred triggers
    /// included); on SQLite it is a transaction like any other.
    func statementTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result

    /// Runs read-only statements outside a transaction (each statement sees committed data; on SQLite they
    /// run on reader connections, concurrently with the writer). For lookups of one statement.
    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws
        -> Result

    /// Where audit rows that go with no other change are joined with those of concurrent requests
    /// (``AuditBatches``): PostgreSQL's; `nil` on SQLite, whose one writer commits in groups already.
    var auditBatches: AuditBatches? { get }

    /// Releases connections. Further calls fail.
    func close() async
}

/// 64-bit FNV-1a: a stable lock number for a lock key (collisions only serialise unrelated work).
package func lockNumber(_ key: String) -> Int64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in key.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return Int64(bitPattern: hash)
}

extension ServerStorage {
    /// Locks the selected row until the transaction ends on PostgreSQL; SQLite's `BEGIN IMMEDIATE`
    /// already holds the whole database. Shared by the storage files of every concern.
    var forUpdate: String { dialect == .postgres ? " FOR UPDATE" : "" }

    /// Whether the database has the table `name`: a database of a server that predates the migration
    /// creating it has not. The commands that read one concern's tables ask before reading.
    func hasTable(_ name: String) async throws -> Bool {
        let sql =
            dialect == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?"
            : "SELECT table_name FROM information_schema.tables WHERE table_name = ? AND table_schema = current_schema()"
        return try await read { transaction in !(try await transaction.query(sql, .text(name))).isEmpty }
    }
}

/// Outcome of a single-use write (a cipherText write, a session confirm): shared by those storage files.
enum SingleUseWrite: Sendable, Equatable {
    case done
    case notFound
    case tokenSpent
}
