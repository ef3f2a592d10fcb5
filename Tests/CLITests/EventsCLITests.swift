import Foundation
import ShareCrypto
import ShareRecovery
import Testing

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

    private func nextRequest(_ page: JSONValue) -> String? {
        guard case .array(let rows)? = page["events"], case .string(let id)? = rows.first?["requestId"] else {
            return nil
        }
        return id
    }
}
