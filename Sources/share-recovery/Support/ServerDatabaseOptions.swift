import ArgumentParser
import ShareRecoveryServer

/// The options of a server's database, shared by `serve`, `migrate` and `keys rotate`: PostgreSQL's pool, timeouts,
/// password and TLS (an SQLite database ignores them).
struct ServerDatabaseOptions: ParsableArguments {
    @Option(help: "An SQLite file path (default) or a postgres://user@host:port/db URL.")
    var database = "share-recovery.sqlite"
    @Option(
        help:
            "PostgreSQL: file with the database password, one trailing newline ignored (else the URL's, else $SHARE_RECOVERY_DATABASE_PASSWORD)."
    )
    var databasePasswordFile: String?
    @Option(
        help: ArgumentHelp(
            "PostgreSQL: require TLS, verifying the server's certificate chain (require) and also its host name (verify-full).",
            discussion: "Overrides the URL's sslmode; without it the URL decides (default prefer)."))
    var databaseTls: PostgresSettings.TLSMode?
    @Option(
        help:
            "PostgreSQL: PEM file of the certificate authorities that sign the database's certificate (with --database-tls)."
    )
    var databaseCaFile: String?
    @Option(help: "PostgreSQL: connections this process opens at most, 1 to 1000.")
    var databasePoolSize = PostgresSettings().poolSize
    @Option(help: "PostgreSQL: seconds a statement may run before it is cancelled (0: no limit), at most 86400.")
    var databaseStatementTimeout = PostgresSettings().statementTimeoutSeconds
    @Option(
        help:
            "PostgreSQL: seconds a wait for a lock may last (0: no limit), at most 86400; migrations wait this long for their lock."
    )
    var databaseLockTimeout = PostgresSettings().lockTimeoutSeconds
    @Option(
        help:
            "PostgreSQL: seconds a session may sit in an open transaction before the database ends it (0: no limit), at most 86400."
    )
    var databaseIdleInTransactionTimeout = PostgresSettings().idleInTransactionTimeoutSeconds

    /// The `--database` value: a PostgreSQL URL, else an SQLite path.
    var location: ServerConfiguration.Database { ServeCommand.database(database) }

    /// The PostgreSQL settings the options give, checked.
    /// - Throws: ``CLIError`` usage (exit 2) for a value out of range or options that do not fit together.
    func settings() throws(CLIError) -> PostgresSettings {
        var settings = PostgresSettings()
        settings.poolSize = databasePoolSize
        settings.statementTimeoutSeconds = databaseStatementTimeout
        settings.lockTimeoutSeconds = databaseLockTimeout
        settings.idleInTransactionTimeoutSeconds = databaseIdleInTransactionTimeout
        settings.password = databasePasswordFile.map { .file(path: $0) }
        settings.tls = databaseTls
        settings.caFile = databaseCaFile
        do { try settings.validate() } catch { throw CLIError.usage(error) }
        return settings
    }
}
