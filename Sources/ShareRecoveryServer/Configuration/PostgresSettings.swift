/// How the server uses a PostgreSQL database (ignored on SQLite): its connection pool, the timeouts
/// every connection sets, where the password comes from, TLS, and whether `serve` may migrate
/// (docs/server.md, "PostgreSQL in production").
public struct PostgresSettings: Sendable {
    /// TLS to the database, overriding the URL's `sslmode`.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// TLS or no connection; the server's certificate chain is verified (against ``caFile`` or the
        /// system's roots), its host name is not.
        case require
        /// TLS or no connection; the chain is verified and the certificate must name the URL's host.
        case verifyFull = "verify-full"
    }

    /// The environment variable read for the password when neither the URL nor ``password`` gives one.
    public static let passwordEnvironmentVariable = "SHARE_RECOVERY_DATABASE_PASSWORD"
    /// The pool sizes accepted.
    public static let poolSizes = 1...1000
    /// The timeouts accepted, in seconds; 0 turns one off.
    public static let timeouts = 0...86_400

    /// Connections each server process opens at most (default 24). Across processes the sum must stay
    /// below the database's `max_connections`, with room for migrations and operators.
    public var poolSize: Int
    /// `statement_timeout` of every connection, in seconds (default 30): a statement running longer
    /// is cancelled and its request fails, instead of holding a connection and its locks.
    public var statementTimeoutSeconds: Int
    /// `lock_timeout` of every connection, in seconds (default 10): a wait for a row, table or advisory
    /// lock longer than this fails; a migration waits at most this long for its lock and tables.
    public var lockTimeoutSeconds: Int
    /// `idle_in_transaction_session_timeout`, in seconds (default 60): the database ends a session that
    /// sits in an open transaction this long, releasing its locks.
    public var idleInTransactionTimeoutSeconds: Int
    /// The password, when the URL has none: a file or environment variable (one trailing newline is
    /// ignored). `nil`: the URL's, else ``passwordEnvironmentVariable`` when set, else none.
    public var password: ServerConfiguration.SecretSource?
    /// TLS to the database; `nil`: as the URL's `sslmode` says (default `prefer`).
    public var tls: TLSMode?
    /// PEM file of the certificate authorities that sign the database's certificate (with ``tls``);
    /// `nil`: the system's roots.
    public var caFile: String?
    /// Whether `serve` applies missing migrations at start. `false` (the default): a database that lacks
    /// one of this build's migrations is refused (`databaseNotMigrated`); `share-recovery migrate` applies
    /// them as a step of its own, with rights the servers need not have.
    public var migrateAtStart: Bool

    /// The defaults: 24 connections, timeouts of 30 s (statements), 10 s (locks) and 60 s (idle in a
    /// transaction), the URL's password and TLS, no migration at start.
    public init() {
        poolSize = 24
        statementTimeoutSeconds = 30
        lockTimeoutSeconds = 10
        idleInTransactionTimeoutSeconds = 60
        password = nil
        tls = nil
        caFile = nil
        migrateAtStart = false
    }

    /// Checks every value's range and that the options fit together.
    /// - Throws: ``ServerStartError`` `invalidConfiguration` naming the value.
    public func validate() throws(ServerStartError) {
        guard Self.poolSizes.contains(poolSize) else {
            throw ServerStartError(
                .invalidConfiguration,
                "the database pool size must be 1 to \(Self.poolSizes.upperBound), not \(poolSize)"
            )
        }
        for (name, value) in [
            ("statement", statementTimeoutSeconds), ("lock", lockTimeoutSeconds),
            ("idle-in-transaction", idleInTransactionTimeoutSeconds),
        ] where !Self.timeouts.contains(value) {
            throw ServerStartError(
                .invalidConfiguration,
                "the database \(name) timeout must be 0 (off) to \(Self.timeouts.upperBound) seconds, not \(value)")
        }
        if caFile != nil, tls == nil {
            throw ServerStartError(
                .invalidConfiguration, "a CA file is used with TLS only: give --database-tls require or verify-full")
        }
    }

    /// The runtime parameters every connection starts with (startup parameters, so a pooled connection
    /// never runs a statement without them), in milliseconds.
    var connectionParameters: [(String, String)] {
        [
            ("statement_timeout", String(statementTimeoutSeconds * 1000)),
            ("lock_timeout", String(lockTimeoutSeconds * 1000)),
            ("idle_in_transaction_session_timeout", String(idleInTransactionTimeoutSeconds * 1000)),
        ]
    }

    /// `location` with this configuration's password and TLS applied.
    /// - Throws: ``ServerStartError`` `invalidConfiguration` when the password is given twice or its
    ///   source cannot be read.
    package func applied(to location: PostgresLocation) throws(ServerStartError) -> PostgresLocation {
        try validate()
        var result = location
        if let password {
            guard location.password == nil else {
                throw ServerStartError(
                    .invalidConfiguration,
                    "the database password is given twice, in the URL and as a file or variable: keep one (the file)")
            }
            result.password = try SecretLoading.databasePassword(password)
        } else if location.password == nil,
            let fromEnvironment = SecretLoading.environment(Self.passwordEnvironmentVariable)
        {
            result.password = try SecretLoading.databasePassword(.value(fromEnvironment))
        }
        switch tls {
        case nil: break
        case .require?:
            result.requireTLS = true
            result.verifiesHostname = false
        case .verifyFull?:
            result.requireTLS = true
            result.verifiesHostname = true
        }
        result.caFile = caFile
        return result
    }
}
