public import Logging

/// What `share-recovery migrate` did.
public struct MigrationResult: Sendable, Equatable {
    /// Migrations applied now (0: the database was already current).
    public let applied: Int
    /// The schema version the database is at: the number of this build's migrations.
    public let version: Int
}

/// Applies this build's missing migrations to a server database, as a deploy step of its own: on
/// PostgreSQL under an advisory lock held at most ``PostgresSettings/lockTimeoutSeconds`` waiting, on
/// SQLite in one write transaction. A database with migrations of a newer release is refused and left
/// as it is.
/// - Parameters:
///   - database: The SQLite path or PostgreSQL URL.
///   - postgres: With PostgreSQL, the password, TLS and lock timeout (the pool is one connection's worth).
///   - logger: Where the driver logs.
/// - Returns: How many migrations were applied, and the version reached.
/// - Throws: ``ServerStartError``: `schemaNewerThanBuild`, `migrationInProgress` (the lock was not had
///   in time), `databaseUnavailable`, `invalidConfiguration`.
public func migrateDatabase(
    _ database: ServerConfiguration.Database, postgres: PostgresSettings = PostgresSettings(), logger: Logger
) async throws -> MigrationResult {
    switch database {
    case .sqlite(let path):
        let storage = try SQLiteStorage(path: path)
        do {
            let applied = try await storage.transaction { transaction in
                if case .newer(let versions) = try await Migrations.state(in: transaction, dialect: .sqlite) {
                    throw Migrations.newerThanBuild(versions)
                }
                return try await Migrations.apply(in: transaction, dialect: .sqlite)
            }
            await storage.close()
            return MigrationResult(applied: applied, version: Migrations.all.count)
        } catch {
            await storage.close()
            throw error
        }
    case .postgres(let url):
        var settings = postgres
        // One connection migrates; the pool need not open more.
        settings.poolSize = 1
        let storage = PostgresStorage(
            location: try settings.applied(to: try PostgresLocation(url: url)), settings: settings, logger: logger)
        do {
            let applied = try await storage.migrate(refusingNewer: true)
            await storage.close()
            return MigrationResult(applied: applied, version: Migrations.all.count)
        } catch {
            await storage.close()
            throw error
        }
    }
}

extension Migrations {
    /// The refusal of a database a newer release migrated.
    static func newerThanBuild(_ versions: [Int64]) -> ServerStartError {
        ServerStartError(
            .schemaNewerThanBuild,
            "the database has migration(s) \(versions.map(String.init).joined(separator: ", ")) that this build (\(all.count) migrations) does not know: a newer release migrated it. Run that release's `share-recovery migrate`; this one changes nothing"
        )
    }
}
