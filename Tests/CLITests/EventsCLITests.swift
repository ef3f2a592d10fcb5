import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import Testing
import TestSupport

@testable import ShareRecoveryServer

/// `share-recovery events list` and `events redeliver` on a server database written here directly.
@Suite("CLI events")
struct EventsCLITests {
    @Test("list filters by state and account and pages; redeliver re-queues dead events, refuses unknown ids")
    func listAndRedeliver() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("server.sqlite").path
        let storage = try SQLiteStorage(path: path)
        try await storage.migrate()
        for (index, account) in ["u-1", "u-2", "u-1"].enumerated() {
            try await storage.recordAudit(
                AuditEvent(.deviceAdded, account: account, requestId: "r\(index)", at: 1_764_000_000))
        }
        let claimed = try await storage.claimEvents(worker: "w", now: 0, lease: 1, limit: 10)
        try await storage.eventFailed(
            sequence: claimed[0].event.sequence, worker: "w", maximumAttempts: 1, nextAttemptAt: 0, error: "HTTP 500")
        await storage.close()

        func json(_ arguments: [String]) throws -> JSONValue {
            let result = try CLIRunner.run("share-recovery", ["events"] + arguments + ["--database", path])
            #expect(result.status == 0, "\(result.stderr)")
            return try StrictJSON.parse(result.stdout)
        }
        let dead = try json(["list", "--state", "dead"])
        guard case .array(let deadRows)? = dead["events"], let first = deadRows.first else {
            Issue.record("no dead event listed: \(dead)")
            return
        }
        #expect(deadRows.count == 1 && first["lastError"] == .string("HTTP 500"))
        #expect(first["type"] == .string("device.added") && first["account"] == .string("u-1"))
        let page = try json(["list", "--account", "u-1", "--limit", "1"])
        guard case .string(let cursor)? = page["nextCursor"] else {
            Issue.record("no nextCursor: \(page)")
            return
        }
        let next = try json(["list", "--account", "u-1", "--after", cursor])
        #expect(nextRequest(next) == "r2")

        #expect(try json(["redeliver", "--all-dead"])["redelivered"] == .array([first["id"]!]))
        #expect(try json(["list", "--state", "dead"])["events"] == .array([]))
        let unknown = try CLIRunner.run(
            "share-recovery", ["events", "redeliver", "--id", "evt_nothing", "--database", path])
        #expect(unknown.status != 0 && unknown.stderr.contains("notFound"))
        let usage = try CLIRunner.run("share-recovery", ["events", "redeliver", "--database", path])
        #expect(usage.status != 0 && usage.stderr.contains("--all-dead"))
    }

    @Test("on a database older than the events: databaseNotMigrated saying to migrate, which fixes it")
    func olderDatabase() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("server.sqlite").path
        let storage = try SQLiteStorage(path: path)
        try await storage.migrate()
        // Back to the schema of a server before the outbox migration.
        let version = try #require(Migrations.all.firstIndex(of: Migrations.eventOutbox)) + 1
        try await storage.transaction { transaction in
            try await transaction.query("DROP TRIGGER audit_events_outbox")
            try await transaction.query("DROP TABLE event_outbox")
            try await transaction.query("DELETE FROM schema_migrations WHERE version = ?", .integer(Int64(version)))
        }
        try await storage.recordAudit(AuditEvent(.deviceAdded, account: "u-1", requestId: "r0", at: 1_764_000_000))
        await storage.close()

        for arguments in [["list"], ["redeliver", "--all-dead"]] {
            let refused = try CLIRunner.run("share-recovery", ["events"] + arguments + ["--database", path])
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.hasPrefix("error: databaseNotMigrated:"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("no such table"), "\(refused.stderr)")
            #expect(refused.stderr.contains("hint: run `share-recovery migrate --database`"), "\(refused.stderr)")
        }
        // What the hint says: `migrate`; events begin with it.
        let migrate = try CLIRunner.run("share-recovery", ["migrate", "--database", path])
        #expect(migrate.status == 0 && migrate.stdout.contains(#""applied":1"#), "\(migrate.stderr)")
        let migrated = try SQLiteStorage(path: path)
        try await migrated.recordAudit(AuditEvent(.deviceAdded, account: "u-1", requestId: "r1", at: 1_764_000_001))
        await migrated.close()
        let listed = try CLIRunner.run("share-recovery", ["events", "list", "--database", path])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(nextRequest(try StrictJSON.parse(listed.stdout)) == "r1")
    }

    @Test("two serve processes on one PostgreSQL deliver each event once between them, in order per account")
    func twoServersOnePostgres() async throws {
        let url = try AuditCLITests.Database.postgresURLOrSkip()
        guard let python = StandardWebhooksReceiver.python() else {
            let skipped = Comment(rawValue: StandardWebhooksReceiver.skipped)
            Issue.record(skipped, severity: .warning)
            try Test.cancel(skipped)
        }
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database =
            url + (url.contains("?") ? "&" : "?") + "schema=cli_" + Hex.encode(SystemRandom().bytes(count: 8))
        for (name, text) in [
            ("events.secrets", "whsec_" + Base64.encode(SystemRandom().bytes(count: 32))),
            ("master.key", Hex.encode(SystemRandom().bytes(count: 32))),
            ("webhook.secret", Hex.encode(SystemRandom().bytes(count: 24))),
        ] {
            try (text + "\n").write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let receiver = try StandardWebhooksReceiver(
            python: python, secretFile: directory.appendingPathComponent("events.secrets").path,
            directory: directory.path)
        defer { receiver.stop() }
        let serve = [
            "serve", "--port", "0", "--database", database, "--master-key-file", "master.key",
            "--webhook-secret-file", "webhook.secret", "--otp-file", "otp.jsonl",
            "--events-url", "http://127.0.0.1:\(receiver.port)/events", "--events-secret-file", "events.secrets",
            "--migrate",
        ]
        // The first server migrates the schema at start; the second finds it migrated.
        let servers = [
            try MethodsCLITests.ServerProcess(directory: directory, arguments: serve),
            try MethodsCLITests.ServerProcess(directory: directory, arguments: serve),
        ]

        var logger = Logger(label: "events-cli-tests")
        logger.logLevel = .critical
        let storage = PostgresStorage(location: try PostgresLocation(url: database), logger: logger)
        let accounts = (0..<6).map { "two-\($0)" }
        for round in 0..<5 {
            try await storage.recordAudit(
                accounts.map {
                    AuditEvent(.deviceAdded, account: $0, requestId: "\($0)-\(round)", at: 1_764_000_000 + Int64(round))
                })
        }
        // Done once both servers have marked every event delivered: nothing is claimed again after that.
        let deadline = Date().addingTimeInterval(20)
        var outbox: [OutboxEntry] = []
        repeat {
            try await Task.sleep(for: .milliseconds(50))
            outbox = try await storage.outboxEntries(state: nil, account: nil, after: 0, limit: 100)
        } while !(outbox.count == 30 && outbox.allSatisfy { $0.state == .delivered }) && Date() < deadline
        await storage.close()
        withExtendedLifetime(servers) {}

        #expect(outbox.count == 30 && outbox.allSatisfy { $0.state == .delivered }, "\(outbox.map(\.state))")
        let received = StandardWebhooksReceiver.received(log: receiver.log)
        #expect(received.allSatisfy { $0.verified })
        // Once between them: as many deliveries as events, each id once.
        #expect(received.count == 30 && Set(received.map(\.id)) == Set(outbox.map(\.event.id)), "\(received.count)")
        for account in accounts {
            let requests = received.compactMap { delivery -> String? in
                let event = try? StrictJSON.parse(delivery.body)
                guard event?["account"] == .string(account), case .string(let request)? = event?["requestId"] else {
                    return nil
                }
                return request
            }
            #expect(requests == (0..<5).map { "\(account)-\($0)" })
        }
    }

    private func nextRequest(_ page: JSONValue) -> String? {
        guard case .array(let rows)? = page["events"], case .string(let id)? = rows.first?["requestId"] else {
            return nil
        }
        return id
    }
}
