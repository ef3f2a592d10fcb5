import Foundation
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// `share-recovery migrate` as a deploy step, `serve` refusing an unmigrated PostgreSQL (and starting
/// with `--migrate`), the password from a file, and the database options' usage errors.
@Suite("CLI migrate")
struct MigrateCLITests {
    @Test("migrate on SQLite applies every migration once, reports the database current, refuses a newer one")
    func sqlite() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try CLIRunner.run("share-recovery", ["migrate", "--database", "server.sqlite"], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let applied = try StrictJSON.parse(first.stdout)
        #expect(applied["applied"] != .number("0") && applied["version"] == applied["applied"], "\(first.stdout)")
        let again = try CLIRunner.run("share-recovery", ["migrate", "--database", "server.sqlite"], in: directory)
        #expect(again.status == 0 && again.stderr.contains("the database is current"), "\(again.stderr)")
        #expect(try StrictJSON.parse(again.stdout)["applied"] == .number("0"))

        // A newer release's migration: refused, with what to do, and nothing changed.
        let storage = try SQLiteStorage(path: directory.appendingPathComponent("server.sqlite").path)
        let newer = Int64(Migrations.all.count + 1)
        _ = try await storage.transaction {
            try await $0.query("INSERT INTO schema_migrations (version) VALUES (?)", .integer(newer))
        }
        await storage.close()
        let refused = try CLIRunner.run("share-recovery", ["migrate", "--database", "server.sqlite"], in: directory)
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix("error: schemaNewerThanBuild: the database has migration(s) \(newer) ")
                && refused.stderr.contains("\nhint: this database was migrated by a newer release"), "\(refused.stderr)"
        )
    }

    @Test(
        "database options out of range or that do not fit together are usage errors (exit 2)",
        arguments: [
            (["--database-pool-size", "0"], "pool size must be 1 to 1000"),
            (["--database-statement-timeout=-1"], "statement timeout must be 0 (off) to 86400"),
            (["--database-lock-timeout", "86401"], "lock timeout must be 0 (off) to 86400"),
            (["--database-ca-file", "ca.pem"], "give --database-tls require or verify-full"),
        ])
    func usageErrors(options: [String], reason: String) throws {
        for command in ["migrate", "serve"] {
            let run = try CLIRunner.run("share-recovery", [command, "--database", "server.sqlite"] + options)
            #expect(run.status == 2, "\(command) \(options): \(run.stderr)")
            #expect(
                run.stderr.hasPrefix("error: invalidConfiguration: ") && run.stderr.contains(reason), "\(run.stderr)")
        }
        let tls = try CLIRunner.run("share-recovery", ["migrate", "--database-tls", "sometimes"])
        #expect(tls.status == 2 && tls.stderr.contains("require"), "\(tls.stderr)")
    }

    @Test("on PostgreSQL: serve refuses an unmigrated database, migrate (password from a file) fixes it")
    func postgres() throws {
        let url = try AuditCLITests.Database.postgresURLOrSkip()
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database =
            url + (url.contains("?") ? "&" : "?") + "schema=cli_" + Hex.encode(SystemRandom().bytes(count: 8))
        for (name, text) in [
            ("master.key", Hex.encode(SystemRandom().bytes(count: 32))),
            ("webhook.secret", Hex.encode(SystemRandom().bytes(count: 24))),
        ] {
            try (text + "\n").write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let serve = [
            "serve", "--port", "0", "--database", database, "--master-key-file", "master.key", "--webhook-secret-file",
            "webhook.secret", "--otp-file", "otp.jsonl",
        ]
        let refused = try CLIRunner.run("share-recovery", serve, in: directory)
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(
            refused.stderr.hasPrefix("error: databaseNotMigrated: the PostgreSQL database has none"),
            "\(refused.stderr)")
        #expect(
            refused.stderr.contains("`share-recovery migrate --database …`") && refused.stderr.contains("--migrate")
                && refused.stderr.contains("\nhint: run `share-recovery migrate --database`"), "\(refused.stderr)")

        // The password in a file rather than in the URL, as an operator keeps it off the command line.
        let credentials = try #require(database.firstMatch(of: /^postgres(?:ql)?:\/\/[^:@\/]+:([^@]*)@/))
        let password = String(credentials.output.1)
        let bare = database.replacingOccurrences(of: ":" + password + "@", with: "@")
        try (password + "\n").write(
            to: directory.appendingPathComponent("db.password"), atomically: true, encoding: .utf8)
        let migrate = try CLIRunner.run(
            "share-recovery", ["migrate", "--database", bare, "--database-password-file", "db.password"], in: directory)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(try StrictJSON.parse(migrate.stdout)["applied"] != .number("0"), "\(migrate.stdout)")

        let started = try MethodsCLITests.ServerProcess(directory: directory, arguments: serve)
        #expect(started.base.hasPrefix("http://127.0.0.1:"))
        withExtendedLifetime(started) {}
    }
}
