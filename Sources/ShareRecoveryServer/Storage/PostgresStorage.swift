#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
package import Logging
import NIOSSL
import PostgresNIO
import ShareCrypto
import ShareRecovery

/// ``ServerStorage`` on PostgreSQL through a postgres-nio `PostgresClient` (a connection pool).
///
/// Transactions run at READ COMMITTED; operations that read before they write take a row lock
/// (`SELECT … FOR UPDATE`) or a transaction-scoped advisory lock (``SQLTransaction/lock(_:)``), and
/// counters are single atomic upserts. A transaction that hits a serialisation failure or deadlock is
/// retried from the start (its body only touches the database).
package final class PostgresStorage: ServerStorage {
    package let dialect = SQLDialect.postgres
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let schema: String?
    private let logger: Logger
    private let location: PostgresLocation
    /// How long a migration waits for its lock and tables.
    private let lockTimeoutSeconds: Int
    /// Whether statements are prepared once per connection (``PostgresTransaction``): only once the
    /// schema is migrated, so that a statement is never prepared against tables about to change.
    private let prepares = Locked(false)
    package let auditBatches: AuditBatches? = AuditBatches()

    /// Connects lazily (the pool opens connections on demand).
    /// - Parameters:
    ///   - location: The parsed `postgres://` URL, its password and TLS applied (``PostgresSettings``).
    ///   - settings: The pool size and the timeouts every connection starts with.
    ///   - logger: Where query errors are logged.
    package init(location: PostgresLocation, settings: PostgresSettings = PostgresSettings(), logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database,
            tls: location.requireTLS
                ? .require(Self.tlsConfiguration(location))
                : location.preferTLS ? .prefer(Self.tlsConfiguration(location)) : .disable)
        configuration.options.maximumConnections = settings.poolSize
        configuration.options.additionalStartupParameters =
            [("application_name", "share-recovery-server")] + settings.connectionParameters
        if let schema = location.schema {
            configuration.options.additionalStartupParameters.append(("search_path", schema))
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.schema = location.schema
        self.logger = logger
        self.location = location
        self.lockTimeoutSeconds = settings.lockTimeoutSeconds
        runTask = Task { await client.run() }
    }

    /// The chain is always verified (against the CA file, else the system's roots); the host name
    /// unless `--database-tls require` said otherwise.
    private static func tlsConfiguration(_ location: PostgresLocation) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = location.verifiesHostname ? .fullVerification : .noHostnameVerification
        if let caFile = location.caFile { tls.trustRoots = .file(caFile) }
        return tls
    }

    /// The key of the advisory lock migrations take, one migrator at a time across processes.
    static let migrationLock = "share-recovery-server migrations"

    package func migrate() async throws { _ = try await migrate(refusingNewer: false) }

    /// Applies the migrations this build knows that the database lacks, in one transaction under the
    /// migration lock, waiting at most the lock timeout for that lock and for each table it alters.
    /// Statements run without the statement timeout: a long migration is not cut halfway.
    /// - Parameter refusingNewer: Whether a database with migrations this build does not know is
    ///   refused (`share-recovery migrate`) or left as it is (`serve --migrate`: a newer release
    ///   expanded it, and this one still runs on it; docs/server.md, "Migrations").
    /// - Returns: How many migrations were applied.
    /// - Throws: ``ServerStartError`` `migrationInProgress` when the lock is not had in time,
    ///   `schemaNewerThanBuild` when refused, `databaseUnavailable` when the database cannot be reached.
    package func migrate(refusingNewer: Bool) async throws -> Int {
        try await probe()
        let schema = self.schema, lockTimeout = lockTimeoutSeconds
        let applied = try await transaction { transaction in
            try await transaction.query("SET LOCAL statement_timeout = 0")
            try await transaction.query("SET LOCAL lock_timeout = \(lockTimeout * 1000)")
            do {
                try await transaction.lock(Self.migrationLock)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                throw ServerStartError(
                    .migrationInProgress,
                    "another process holds the migration lock (a `share-recovery migrate` or `serve --migrate`) and did not release it within \(lockTimeout) s: wait for it to finish, then run this again"
                )
            }
            if let schema {
                // Validated by PostgresLocation: [a-z_][a-z0-9_]*.
                try await transaction.query("CREATE SCHEMA IF NOT EXISTS \(schema)")
            }
            if refusingNewer,
                case .newer(let versions) = try await Migrations.state(in: transaction, dialect: .postgres)
            {
                throw Migrations.newerThanBuild(versions)
            }
            return try await Migrations.apply(in: transaction, dialect: .postgres)
        }
        prepares.withLock { $0 = true }
        return applied
    }

    /// The schema's state, read without changing anything; a database that is migrated (or newer)
    /// gets prepared statements from here on, as after ``migrate()``.
    /// - Throws: ``ServerStartError`` `databaseUnavailable` when the database cannot be reached.
    func schemaState() async throws -> Migrations.SchemaState {
        try await probe()
        let state = try await read { transaction in try await Migrations.state(in: transaction, dialect: .postgres) }
        if state.isUsable { prepares.withLock { $0 = true } }
        return state
    }

    package func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger, prepares = self.prepares.withLock { $0 }
        return try await retrying { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let transaction = PostgresTransaction(connection: connection, logger: logger, prepares: prepares)
                let result = try await body(transaction)
                // The request's Idempotency-Key is marked used in the commit of its change.
                try await IdempotencyClaim.current?.markApplied(in: transaction)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    package func statementTransaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        // A request's Idempotency-Key is marked used in the commit of its change: a second statement.
        guard IdempotencyClaim.current == nil else { return try await transaction(body) }
        let logger = self.logger, prepares = self.prepares.withLock { $0 }
        return try await retrying { connection in
            try await body(PostgresTransaction(connection: connection, logger: logger, prepares: prepares))
        }
    }

    /// Runs `operation` on a leased connection, again (up to five times) after a serialisation failure
    /// or deadlock, in an unstructured task: the caller's cancellation must not stop it between `BEGIN`
    /// and `COMMIT`/`ROLLBACK`.
    private func retrying<Result: Sendable>(
        _ operation: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let client = self.client
        return try await Task {
            var attempt = 0
            while true {
                // An attempt that is run again must not leave its audit events counted.
                CommittedEvents.current?.removeAll()
                do {
                    return try await client.withConnection { (connection: PostgresConnection) async throws -> Result in
                        try await operation(connection)
                    }
                } catch let error as PSQLError where attempt < 5 && Self.isRetryable(error) {
                    attempt += 1
                }
            }
        }.value
    }

    package func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result)
        async throws
        -> Result
    {
        let client = self.client
        let logger = self.logger, prepares = self.prepares.withLock { $0 }
        return try await client.withConnection { (connection: PostgresConnection) async throws -> Result in
            try await body(PostgresTransaction(connection: connection, logger: logger, prepares: prepares))
        }
    }

    package func close() async {
        runTask.cancel()
        _ = await runTask.value
    }

    /// One direct connection first, so an unreachable database or a refused login fails the start at once with
    /// a clear error instead of after the pool's retries.
    private func probe() async throws {
        let failure = { (error: any Error) in
            ServerStartError(
                .databaseUnavailable,
                "cannot connect to PostgreSQL at \(self.location.host):\(self.location.port)/\(self.location.database): \(String(reflecting: error))"
            )
        }
        let tls: PostgresConnection.Configuration.TLS
        do {
            let context = try NIOSSLContext(configuration: Self.tlsConfiguration(location))
            tls = location.requireTLS ? .require(context) : location.preferTLS ? .prefer(context) : .disable
        } catch {
            throw failure(error)
        }
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw failure(error)
        }
        try? await connection.close()
    }

    /// serialization_failure and deadlock_detected: the transaction may simply be run again.
    private static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }
}

/// The statements of a PostgreSQL transaction on one leased connection.
private struct PostgresTransaction: SQLTransaction {
    let dialect = SQLDialect.postgres
    let connection: PostgresConnection
    let logger: Logger
    /// Whether data statements run as named prepared statements (``PreparedText``).
    let prepares: Bool

    func query(_ sql: String, _ values: [SQLValue]) async throws -> [SQLRow] {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let number): bindings.append(number)
            case .text(let text): bindings.append(text)
            case .blob(let bytes): try bindings.append(Data(bytes))
            }
        }
        let known = Self.known(sql)
        var rows: [PostgresRow] = []
        if prepares, known.isData, let text = PreparedText(known, values) {
            do {
                try await PreparedText.$current.withValue(text) {
                    for try await row in try await connection.execute(
                        PreparedText.Statement(bindings: bindings), logger: logger)
                    {
                        rows.append(row)
                    }
                }
            } catch let error as PSQLError where PreparedText.poisons(error) {
                // postgres-nio remembers a failed preparation on the connection for good: a connection
                // whose statement could not be prepared is closed, and the pool opens another.
                try? await connection.close()
                throw error
            }
        } else {
            rows = try await connection.query(PostgresQuery(unsafeSQL: known.text, binds: bindings), logger: logger)
                .collect()
        }
        return try rows.map { row in
            var columns: [String: SQLValue] = [:]
            for cell in row {
                columns[cell.columnName.lowercased()] = try Self.value(of: cell)
            }
            return SQLRow(columns)
        }
    }

    func lock(_ key: String) async throws {
        try await query("SELECT pg_advisory_xact_lock(?)", .integer(lockNumber(key)))
    }

    private static func value(of cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .bytea: return .blob(Array(try cell.decode(Data.self)))
        case .void: return .null
        default: return .text(try cell.decode(String.self))
        }
    }

    /// What is known of a statement's text: numbered (`?` → `$1`, …), whether it is a data statement
    /// (one PostgreSQL can prepare), and a hash that names it.
    struct KnownText: Sendable {
        let text: String
        let isData: Bool
        let hash: String
    }

    /// Statements already seen: the server runs a few dozen fixed texts, and numbering one anew for
    /// every query was 2 % of a cipherText GET's CPU (docs/server.md, "Throughput"). Bounded, in case
    /// some text were ever built from data.
    private static let seen = Locked<[String: KnownText]>([:])

    private static func known(_ sql: String) -> KnownText {
        if let known = seen.withLock({ $0[sql] }) { return known }
        let text = numbering(sql)
        let first = text.drop { $0.isWhitespace }.prefix(7).uppercased()
        let isData = ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains { first.hasPrefix($0) }
        let known = KnownText(
            text: text, isData: isData, hash: Hex.encode(Array(SHA256.hash(Array(text.utf8)).prefix(12))))
        seen.withLock { if $0.count < 1_024 { $0[sql] = known } }
        return known
    }

    /// `?` → `$1`, `$2`, … (the statements never contain a literal `?`).
    private static func numbering(_ sql: String) -> String {
        var out = ""
        var number = 0
        for character in sql {
            if character == "?" {
                number += 1
                out += "$\(number)"
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// A statement prepared once per connection and run by name afterwards, so that PostgreSQL parses and
/// plans each of the server's few dozen texts once per connection instead of on every query
/// (docs/server.md, "Throughput").
///
/// postgres-nio prepares and caches per connection what a `PostgresPreparedStatement` names, but takes
/// the name, text and parameter types from the statement's *type*; the server's statements are texts.
/// So one type, ``Statement``, reads them from this task-local value, which `query` sets around the
/// call (postgres-nio reads them in the calling task, before and after its one suspension).
///
/// The name covers the text and the types of this call's parameters (a `NULL` has none and lets
/// PostgreSQL infer it), so a prepared statement always has the types an unnamed one would have had.
private struct PreparedText: Sendable {
    let name: String
    let sql: String
    let types: [PostgresDataType]

    @TaskLocal static var current = PreparedText(name: "", sql: "", types: [])

    init(name: String, sql: String, types: [PostgresDataType]) {
        self.name = name
        self.sql = sql
        self.types = types
    }

    /// Named `sr_<hash of the text>_<one letter per parameter>`, within PostgreSQL's 63 bytes; `nil`
    /// for a statement with too many parameters to name, which runs unnamed.
    init?(_ known: PostgresTransaction.KnownText, _ values: [SQLValue]) {
        guard values.count <= 32 else { return nil }
        var name = "sr_" + known.hash + "_"
        var types: [PostgresDataType] = []
        types.reserveCapacity(values.count)
        for value in values {
            let (letter, type): (String, PostgresDataType) =
                switch value {
                case .null: ("n", .null)
                case .integer: ("i", .int8)
                case .text: ("t", .text)
                case .blob: ("b", .bytea)
                }
            name += letter
            types.append(type)
        }
        self.init(name: name, sql: known.text, types: types)
    }

    /// Errors that may have come from the preparation itself, which postgres-nio would then answer
    /// for that name on that connection for good: an aborted transaction (25), an unknown statement
    /// (26), a syntax or schema error (42), a plan the schema outdated (0A).
    static func poisons(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return ["25", "26", "42", "0A"].contains { state.hasPrefix($0) }
    }

    struct Statement: PostgresPreparedStatement {
        typealias Row = PostgresRow
        static var name: String { PreparedText.current.name }
        static var sql: String { PreparedText.current.sql }
        static var bindingDataTypes: [PostgresDataType] { PreparedText.current.types }

        let bindings: PostgresBindings

        func makeBindings() -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }
}
