import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL as an operator deploys it: the pool and per-connection timeouts, the password from a
/// file or the environment, TLS options, `migrate` as its own step (locked, refusing a newer schema),
/// and `serve` refusing a database it would have to migrate unless told to.
@Suite("Database deployment", .serialized)
struct DatabaseDeploymentTests {
    static var quiet: Logger {
        var logger = Logger(label: "database-deployment-tests")
        logger.logLevel = .critical
        return logger
    }

    @Test("settings are checked: pool size, timeouts, a CA file without TLS")
    func settingsValidate() throws {
        #expect(throws: Never.self) { try PostgresSettings().validate() }
        var settings = PostgresSettings()
        for change: (inout PostgresSettings) -> Void in [
            { $0.poolSize = 0 }, { $0.poolSize = 1001 }, { $0.statementTimeoutSeconds = -1 },
            { $0.lockTimeoutSeconds = 86_401 }, { $0.idleInTransactionTimeoutSeconds = -5 },
            { $0.caFile = "ca.pem" },
        ] {
            settings = PostgresSettings()
            change(&settings)
            #expect(throws: ServerStartError(.invalidConfiguration, "")) { try settings.validate() }
        }
        settings = PostgresSettings()
        settings.statementTimeoutSeconds = 0
        settings.tls = .require
        settings.caFile = "ca.pem"
        #expect(throws: Never.self) { try settings.validate() }
    }

    @Test("the password comes from the URL, a file or the environment, never twice; TLS modes map to checks")
    func passwordAndTLS() throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/db.password"
        try Data("from-a-file\n".utf8).write(to: URL(fileURLWithPath: file))
        let bare = try PostgresLocation(url: "postgres://recovery@db.internal/recovery")
        let withPassword = try PostgresLocation(url: "postgres://recovery:in-the-url@db.internal/recovery")

        var settings = PostgresSettings()
        #expect(try settings.applied(to: withPassword).password == "in-the-url")
        #expect(try settings.applied(to: bare).password == nil)
        setenv(PostgresSettings.passwordEnvironmentVariable, "from-the-environment", 1)
        defer { unsetenv(PostgresSettings.passwordEnvironmentVariable) }
        #expect(try settings.applied(to: bare).password == "from-the-environment")
        #expect(try settings.applied(to: withPassword).password == "in-the-url")
        settings.password = .file(path: file)
        #expect(try settings.applied(to: bare).password == "from-a-file")
        #expect(throws: ServerStartError(.invalidConfiguration, "")) { try settings.applied(to: withPassword) }
        settings.password = .file(path: directory + "/missing")
        #expect(throws: ServerStartError(.invalidConfiguration, "")) { try settings.applied(to: bare) }
        try Data("\n".utf8).write(to: URL(fileURLWithPath: file))
        settings.password = .file(path: file)
        #expect(throws: ServerStartError(.invalidConfiguration, "")) { try settings.applied(to: bare) }

        settings = PostgresSettings()
        let byURL = try settings.applied(to: try PostgresLocation(url: "postgres://u@h/d?sslmode=disable"))
        #expect(!byURL.requireTLS && !byURL.preferTLS)
        settings.tls = .require
        settings.caFile = "ca.pem"
        let required = try settings.applied(to: try PostgresLocation(url: "postgres://u@h/d?sslmode=disable"))
        #expect(required.requireTLS && !required.verifiesHostname && required.caFile == "ca.pem")
        settings.tls = .verifyFull
        let full = try settings.applied(to: try PostgresLocation(url: "postgres://u@h/d"))
        #expect(full.requireTLS && full.verifiesHostname)
    }

    /// A fresh schema on the test server: `body` gets its URL and a storage with `settings` on it,
    /// closed afterwards.
    static func withFreshPostgres(
        _ settings: PostgresSettings = PostgresSettings(), _ body: (String, PostgresStorage) async throws -> Void
    ) async throws {
        guard case .postgres(let url) = try TestWorld.freshDatabase(.postgres, directory: "") else { return }
        let storage = PostgresStorage(location: try PostgresLocation(url: url), settings: settings, logger: quiet)
        do {
            try await body(url, storage)
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
    }

    @Test("every connection starts with the configured timeouts, and they act")
    func timeoutsPerConnection() async throws {
        var settings = PostgresSettings()
        settings.statementTimeoutSeconds = 1
        settings.lockTimeoutSeconds = 3
        settings.idleInTransactionTimeoutSeconds = 11
        settings.poolSize = 1
        try await Self.withFreshPostgres(settings) { _, storage in
            for (name, value) in [
                ("statement_timeout", "1s"), ("lock_timeout", "3s"), ("idle_in_transaction_session_timeout", "11s"),
            ] {
                let shown = try await storage.read { try await $0.query("SHOW \(name)").first?.text(name) }
                #expect(shown == value, "\(name)")
            }
            // A statement longer than the statement timeout is cancelled (57014, query_canceled).
            await #expect {
                try await storage.read { try await $0.query("SELECT pg_sleep(3)") }
            } throws: { error in
                "\(String(reflecting: error))".contains("57014")
            }
            // One connection: two statements of 0.4 s cannot overlap.
            let start = ContinuousClock.now
            async let first = storage.read { try await $0.query("SELECT pg_sleep(0.4)") }
            async let second = storage.read { try await $0.query("SELECT pg_sleep(0.4)") }
            _ = try await (first, second)
            #expect(ContinuousClock.now - start >= .milliseconds(800))
        }
    }

    @Test("migrate waits at most the lock timeout for another migrator: migrationInProgress")
    func migrationLock() async throws {
        var settings = PostgresSettings()
        settings.lockTimeoutSeconds = 1
        try await Self.withFreshPostgres(settings) { url, storage in
            let holder = PostgresStorage(location: try PostgresLocation(url: url), logger: Self.quiet)
            // The holder keeps the lock from the moment it says so until the migration has given up.
            let (locked, lockTaken) = AsyncStream<Void>.makeStream()
            let (release, released) = AsyncStream<Void>.makeStream()
            let held = Task {
                // Whatever happens, the wait below ends.
                defer { lockTaken.finish() }
                try await holder.transaction { transaction in
                    try await transaction.lock(PostgresStorage.migrationLock)
                    lockTaken.yield()
                    for await _ in release { break }
                }
            }
            for await _ in locked { break }
            await #expect(throws: ServerStartError(.migrationInProgress, "")) {
                _ = try await storage.migrate(refusingNewer: true)
            }
            released.yield()
            try await held.value
            // Released: the same call now applies every migration, once.
            #expect(try await storage.migrate(refusingNewer: true) == Migrations.all.count)
            #expect(try await storage.migrate(refusingNewer: true) == 0)
            await holder.close()
        }
    }

    /// A server configuration on `url` that does not migrate at start.
    static func configuration(_ url: String) -> ServerConfiguration {
        ServerConfiguration(
            host: "127.0.0.1", port: 0, database: .postgres(url: url), masterKey: .value(SecureBytes(zeros: 32)),
            webhookSecret: .value(SecureBytes(copying: Array("a webhook secret of enough bytes".utf8))),
            otpSender: CapturingOTPSender(), logger: quiet)
    }

    @Test("serve refuses an unmigrated or older PostgreSQL unless told to migrate, and runs on a newer one")
    func serveRefusesUnmigrated() async throws {
        try await Self.withFreshPostgres { url, inspector in
            var configuration = Self.configuration(url)
            // The start's refusal, or nil when the server started; any other failure fails the test.
            func refusal() async throws -> ServerStartError? {
                do {
                    let server = try await RunningServer.start(configuration)
                    await server.stop()
                    return nil
                } catch let error as ServerStartError { return error }
            }
            let empty = try await refusal()
            #expect(empty?.code == .databaseNotMigrated)
            #expect(empty?.reason.contains("never migrated") == true)
            #expect(
                empty?.reason.contains("share-recovery migrate") == true && empty?.reason.contains("--migrate") == true)

            #expect(try await migrateDatabase(.postgres(url: url), logger: Self.quiet).applied == Migrations.all.count)
            #expect(try await refusal() == nil)

            // An older schema: as before the signing shares' ages (its migration undone).
            let last = Int64(Migrations.all.count)
            #expect(Migrations.all.last == Migrations.signingShareAges)
            _ = try await inspector.transaction { transaction in
                try await transaction.query("ALTER TABLE signing_shares DROP COLUMN stored_at", [])
                try await transaction.query("DELETE FROM schema_migrations WHERE version = ?", [.integer(last)])
            }
            let older = try await refusal()
            #expect(
                older?.code == .databaseNotMigrated && older?.reason.contains("lacks 1 of") == true,
                "\(String(describing: older))")
            configuration.postgres.migrateAtStart = true
            #expect(try await refusal() == nil)

            // A newer release's migration: the servers of this one run on it; its migrate refuses it.
            _ = try await inspector.transaction {
                try await $0.query("INSERT INTO schema_migrations (version) VALUES (?)", .integer(last + 1))
            }
            configuration.postgres.migrateAtStart = false
            #expect(try await refusal() == nil)
            await #expect(throws: ServerStartError(.schemaNewerThanBuild, "")) {
                _ = try await migrateDatabase(.postgres(url: url), logger: Self.quiet)
            }
        }
    }

    @Test("the password from a file logs in where the URL has none; a wrong one is databaseUnavailable")
    func passwordFile() async throws {
        try await Self.withFreshPostgres { url, _ in
            let location = try PostgresLocation(url: url)
            let password = try #require(location.password)
            let bare = url.replacingOccurrences(of: ":" + password + "@", with: "@")
            #expect(bare != url)
            let directory = TestWorld.makeDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/db.password"
            var settings = PostgresSettings()
            settings.password = .file(path: file)
            try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: file))
            #expect(try await migrateDatabase(.postgres(url: bare), postgres: settings, logger: Self.quiet).applied > 0)
            try Data("not-the-password".utf8).write(to: URL(fileURLWithPath: file))
            await #expect(throws: ServerStartError(.databaseUnavailable, "")) {
                _ = try await migrateDatabase(.postgres(url: bare), postgres: settings, logger: Self.quiet)
            }
        }
    }

    @Test("TLS: require verifies the chain, verify-full the host name too")
    func tls() async throws {
        let url = try TestBackend.postgresURLOrSkip()
        // .ci/postgres.sh's cluster serves TLS with a certificate for localhost, signed by this CA.
        guard let ca = ProcessInfo.processInfo.environment["SHARE_RECOVERY_TEST_POSTGRES_CA"] else {
            let skipped: Comment =
                "TLS tests SKIPPED: SHARE_RECOVERY_TEST_POSTGRES_CA is not set (.ci/postgres.sh sets it)"
            Issue.record(skipped, severity: .warning)
            try Test.cancel(skipped)
        }
        func migrate(host: String, _ mode: PostgresSettings.TLSMode, caFile: String?) async -> ServerStartError.Code? {
            var settings = PostgresSettings()
            settings.tls = mode
            settings.caFile = caFile
            let schema = "tls_" + Hex.encode(SystemRandom().bytes(count: 8))
            let database = url.replacingOccurrences(of: "@127.0.0.1:", with: "@\(host):") + "&schema=" + schema
            do {
                _ = try await migrateDatabase(.postgres(url: database), postgres: settings, logger: Self.quiet)
                return nil
            } catch {
                return (error as? ServerStartError)?.code ?? .stoppedBeforeListening
            }
        }
        #expect(url.contains("@127.0.0.1:") && url.contains("sslmode=disable"))
        #expect(await migrate(host: "localhost", .verifyFull, caFile: ca) == nil)
        #expect(await migrate(host: "127.0.0.1", .require, caFile: ca) == nil)
        // The certificate names localhost, not 127.0.0.1; and the system's roots do not hold the test CA.
        #expect(await migrate(host: "127.0.0.1", .verifyFull, caFile: ca) == .databaseUnavailable)
        #expect(await migrate(host: "localhost", .require, caFile: nil) == .databaseUnavailable)
        #expect(await migrate(host: "localhost", .verifyFull, caFile: nil) == .databaseUnavailable)
    }

    @Test("migrate on SQLite: everything once, then nothing; a newer schema is refused")
    func migrateSQLite() async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = ServerConfiguration.Database.sqlite(path: directory + "/server.sqlite")
        #expect(
            try await migrateDatabase(database, logger: Self.quiet)
                == .init(applied: Migrations.all.count, version: Migrations.all.count))
        #expect(try await migrateDatabase(database, logger: Self.quiet).applied == 0)
        let storage = try SQLiteStorage(path: directory + "/server.sqlite")
        _ = try await storage.transaction {
            try await $0.query(
                "INSERT INTO schema_migrations (version) VALUES (?)", .integer(Int64(Migrations.all.count + 1)))
        }
        await storage.close()
        await #expect(throws: ServerStartError(.schemaNewerThanBuild, "")) {
            _ = try await migrateDatabase(database, logger: Self.quiet)
        }
    }
}
