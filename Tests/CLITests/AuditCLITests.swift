import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// `share-recovery audit verify` and `audit list` on a server database written here directly: exit 0
/// and the count on an intact chain, exit 1 naming the row once one is deleted, on SQLite and (when
/// `SHARE_RECOVERY_TEST_POSTGRES_URL` names a server) PostgreSQL.
@Suite("CLI audit")
struct AuditCLITests {
    enum Database: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        /// The PostgreSQL server of `.ci/postgres.sh`; without one the PostgreSQL case shows as skipped
        /// (a warning, since Swift Testing 6.3 reports a cancelled case as passed) and ends.
        static func postgresURLOrSkip() throws -> String {
            let variable = "SHARE_RECOVERY_TEST_POSTGRES_URL"
            guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else {
                let reason: Comment =
                    "PostgreSQL tests SKIPPED: \(variable) is not set. Run `eval \"$(.ci/postgres.sh)\"` first."
                Issue.record(reason, severity: .warning)
                try Test.cancel(reason)
            }
            return url
        }
    }

    @Test(
        "verify: intact, anchored, then a deleted row named with exit 1; list pages one account",
        arguments: Database.allCases)
    func verifyAndList(database: Database) async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let argument: String
        let storage: any ServerStorage
        switch database {
        case .sqlite:
            argument = directory.appendingPathComponent("server.sqlite").path
            storage = try SQLiteStorage(path: argument)
        case .postgres:
            let url = try Database.postgresURLOrSkip()
            argument =
                url + (url.contains("?") ? "&" : "?") + "schema=cli_" + Hex.encode(SystemRandom().bytes(count: 8))
            var logger = Logger(label: "audit-cli-tests")
            logger.logLevel = .critical
            storage = PostgresStorage(location: try PostgresLocation(url: argument), logger: logger)
        }
        try await storage.migrate()
        for index in 1...5 {
            var detail = AuditEvent.Detail()
            detail.method = .password
            try await storage.recordAudit(
                AuditEvent(
                    .cipherTextRead, account: index % 2 == 0 ? "u-2" : "u-1", requestId: "r\(index)",
                    at: 1_764_000_000 + Int64(index), detail: detail))
        }
        #expect(try await storage.writeAuditAnchor(at: 1_764_000_010))

        let intact = try CLIRunner.run("share-recovery", ["audit", "verify", "--database", argument])
        #expect(intact.status == 0, "\(intact.stderr)")
        let report = try StrictJSON.parse(Array(intact.stdout.utf8))
        #expect(report["intact"] == .bool(true) && report["rows"] == .number("5"))
        #expect(
            report["chains"] == .number("2") && report["anchors"] == .number("1")
                && report["unanchored"] == .number("0"))
        guard case .string(let anchor)? = report["head"]?["anchor"] else {
            Issue.record("no anchor in \(intact.stdout)")
            return
        }
        #expect(anchor.hasPrefix("anchor:1:"))
        #expect(
            try CLIRunner.run("share-recovery", ["audit", "verify", "--database", argument, "--anchor", anchor]).status
                == 0)
        let usage = try CLIRunner.run(
            "share-recovery", ["audit", "verify", "--database", argument, "--anchor", "5:beef"])
        #expect(usage.status == 2 && usage.stderr.contains("--anchor"))

        // u-1 has rows 1, 3, 5: two pages of two.
        let first = try CLIRunner.run(
            "share-recovery", ["audit", "list", "--database", argument, "--account", "u-1", "--limit", "2"])
        #expect(first.status == 0, "\(first.stderr)")
        let page = try StrictJSON.parse(Array(first.stdout.utf8))
        guard case .array(let events)? = page["events"], case .string(let cursor)? = page["nextCursor"] else {
            Issue.record("unexpected page \(first.stdout)")
            return
        }
        #expect(events.map { $0["sequence"] } == [.number("1"), .number("3")])
        #expect(events.first?["detail"] == .object([("method", .string("PASSWORD"))]))
        let second = try CLIRunner.run(
            "share-recovery",
            ["audit", "list", "--database", argument, "--account", "u-1", "--limit", "2", "--after", cursor])
        let last = try StrictJSON.parse(Array(second.stdout.utf8))
        guard case .array(let lastEvents)? = last["events"] else {
            Issue.record("unexpected page \(second.stdout)")
            return
        }
        #expect(lastEvents.map { $0["sequence"] } == [.number("5")])
        #expect(last["nextCursor"] == nil)

        _ = try await storage.transaction { transaction in
            try await transaction.query("DELETE FROM audit_events WHERE seq = 2", [])
        }
        await storage.close()
        let broken = try CLIRunner.run("share-recovery", ["audit", "verify", "--database", argument])
        #expect(broken.status == 1)
        #expect(broken.stdout.isEmpty)
        // Row 2 was u-2's first.
        #expect(
            broken.stderr.hasPrefix(#"error: rowsMissing: row 1 of account "u-2"'s chain is missing"#),
            "\(broken.stderr)")
    }

    @Test("verify names a missing database and one without an audit trail")
    func unusableDatabases() async throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite").path
        let absent = try CLIRunner.run("share-recovery", ["audit", "verify", "--database", missing])
        #expect(absent.status == 1 && absent.stderr.hasPrefix("error: databaseUnavailable:"), "\(absent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))
        // An SQLite file of something else.
        let other = directory.appendingPathComponent("other.sqlite").path
        let storage = try SQLiteStorage(path: other)
        _ = try await storage.transaction { transaction in
            try await transaction.query("CREATE TABLE notes (body TEXT)", [])
        }
        await storage.close()
        let unaudited = try CLIRunner.run("share-recovery", ["audit", "verify", "--database", other])
        #expect(unaudited.status == 1 && unaudited.stderr.hasPrefix("error: noAuditTrail:"), "\(unaudited.stderr)")
    }
}
