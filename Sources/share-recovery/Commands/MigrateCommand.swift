import ArgumentParser
import Logging
import ShareRecoveryServer

/// `migrate`: a server database's schema brought to this release, as a deploy step of its own.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply this release's missing migrations to a server database, then exit.",
        discussion: helpText(
            "Run it once per release, before starting that release's servers: `serve` on PostgreSQL refuses a database that lacks a migration of its build (unless given --migrate). On PostgreSQL it takes an advisory lock, so two migrators never run at once, and waits at most --database-lock-timeout seconds for it and for each table it alters (migrationInProgress beyond that); statements are not cut by the statement timeout. A database a newer release migrated is refused (schemaNewerThanBuild) and left as it is. Migrations only add until no older release runs (expand, then contract: docs/server.md, \"Migrations\"), so servers of the previous release keep running while this one migrates. Prints {\"applied\": N, \"version\": V}. On SQLite, starting `serve` migrates too, so the demo needs no separate step.",
            examples: [
                "share-recovery migrate --database postgres://recovery_owner@db.internal:5432/recovery --database-password-file owner.password --database-tls verify-full --database-ca-file db-ca.pem",
                "SHARE_RECOVERY_DATABASE_PASSWORD=… share-recovery migrate --database postgres://recovery_owner@127.0.0.1/recovery --database-lock-timeout 30",
                "share-recovery migrate --database share-recovery.sqlite",
            ]))

    @OptionGroup var database: ServerDatabaseOptions

    func run() async throws {
        var logger = Logger(label: "share-recovery-migrate")
        logger.logLevel = .critical
        let result = try await migrateDatabase(database.location, postgres: try database.settings(), logger: logger)
        Terminal.error(
            result.applied == 0
                ? "the database is current (version \(result.version))"
                : "applied \(result.applied) migration(s); the database is at version \(result.version)")
        Terminal.output(#"{"applied":\#(result.applied),"version":\#(result.version)}"#)
    }
}
