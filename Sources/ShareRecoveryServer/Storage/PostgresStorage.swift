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

    /// Connects lazily (the pool opens connections on demand).
    /// - Parameters:
    ///   - location: The parsed `postgres://` URL.
    ///   - logger: Where query errors are logged.
    package init(location: PostgresLocation, logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database,
            tls: location.requireTLS
                ? .require(.makeClientConfiguration())
                : location.preferTLS ? .prefer(.makeClientConfiguration()) : .disable)
        configuration.options.maximumConnections = 24
        configuration.options.additionalStartupParameters = [("application_name", "share-recovery-server")]
        if let schema = location.schema {
            configuration.options.additionalStartupParameters.append(("search_path", schema))
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.schema = location.schema
        self.logger = logger
        self.location = location
        runTask = Task { await client.run() }
    }

    package func migrate() async throws {
        try await probe()
        let schema = self.schema
        try await transaction { transaction in
            // One migrator at a time across processes.
            try await transaction.lock("share-recovery-server migrations")
            if let schema {
                // Validated by PostgresLocation: [a-z_][a-z0-9_]*.
                try await transaction.query("CREATE SCHEMA IF NOT EXISTS \(schema)")
            }
            try await Migrations.apply(in: transaction, dialect: .postgres)
        }
    }

    package func transaction<Result: Sendable>(
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger
        return try await retrying { connection in
            try await connection.query("BEGIN", logger: logger)
            do {
                let transaction = PostgresTransaction(connection: connection, logger: logger)
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
        let logger = self.logger
        return try await retrying { connection in try await body(PostgresTransaction(connection: connection, logger: logger)) }
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
        let logger = self.logger
        return try await client.withConnection { (connection: PostgresConnection) async throws -> Result in
            try await body(PostgresTransaction(connection: connection, logger: logger))
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
            let context = try NIOSSLContext(configuration: .makeClientConfiguration())
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
        let query = PostgresQuery(unsafeSQL: Self.numberedPlaceholders(sql), binds: bindings)
        let rows = try await connection.query(query, logger: logger).collect()
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

    /// Statements already numbered: the server runs a few dozen fixed texts, and numbering one anew
    /// for every query was 2 % of a cipherText GET's CPU (docs/server.md, "Throughput"). Bounded, in
    /// case some text were ever built from data.
    private static let numbered = Locked<[String: String]>([:])

    /// `?` → `$1`, `$2`, … (the statements never contain a literal `?`).
    private static func numberedPlaceholders(_ sql: String) -> String {
        if let known = numbered.withLock({ $0[sql] }) { return known }
        let text = numbering(sql)
        numbered.withLock { if $0.count < 1_024 { $0[sql] = text } }
        return text
    }

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
