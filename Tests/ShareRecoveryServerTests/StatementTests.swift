import Testing

@testable import ShareRecoveryServer

/// The statements layer under every storage operation (docs/server.md, "Storage"): on PostgreSQL a
/// data statement is prepared once per connection and run by name afterwards, so what a prepared
/// statement remembers must never change an answer.
@Suite("Statements")
struct StatementTests {
    @Test(
        "a statement run many times, with NULL, integer, text and blob parameters in turn, answers as a fresh one would",
        arguments: TestBackend.allCases)
    func repeatedStatements(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            _ = try await storage.transaction {
                try await $0.query(Self.create("statement_probe (n {int}, t TEXT, b {blob})", $0))
            }
            // Past PostgreSQL's five custom plans, so the generic plan answers too; NULL first, so a
            // statement prepared with an unknown type meets typed values after it.
            for index in 0..<12 {
                let values: [SQLValue] =
                    index == 0
                    ? [.null, .null, .null]
                    : [.integer(Int64(index)), .text("t\(index)"), .blob([UInt8(index), 0, 255])]
                _ = try await storage.transaction { transaction in
                    try await transaction.query("INSERT INTO statement_probe (n, t, b) VALUES (?, ?, ?)", values)
                }
            }
            for index in 1..<12 {
                let rows = try await storage.read { transaction in
                    try await transaction.query(
                        "SELECT n, t, b FROM statement_probe WHERE n = ?", .integer(Int64(index)))
                }
                #expect(rows.count == 1)
                #expect(try rows.first?.integer("n") == Int64(index))
                #expect(try rows.first?.text("t") == "t\(index)")
                #expect(try rows.first?.blob("b") == [UInt8(index), 0, 255])
            }
            let nulls = try await storage.read {
                try await $0.query("SELECT count(*) AS c FROM statement_probe WHERE n IS NULL")
            }
            #expect(try nulls.first?.integer("c") == 1)
        }
    }

    @Test(
        "a statement that failed because its table did not exist yet answers once the table exists",
        arguments: TestBackend.allCases)
    func failedStatementRecovers(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let select = "SELECT n FROM statement_later WHERE n = ?"
            // On PostgreSQL the failure happens while preparing: postgres-nio would answer it again
            // for that name on that connection for good, unless the connection is dropped.
            for _ in 0..<3 {
                await #expect(throws: (any Error).self) {
                    try await storage.read { try await $0.query(select, .integer(1)) }
                }
            }
            _ = try await storage.transaction { try await $0.query(Self.create("statement_later (n {int})", $0)) }
            _ = try await storage.transaction {
                try await $0.query("INSERT INTO statement_later (n) VALUES (?)", .integer(1))
            }
            // Every pooled connection that saw the failure must answer now; a few rounds reach them.
            for _ in 0..<8 {
                let rows = try await storage.read { try await $0.query(select, .integer(1)) }
                #expect(try rows.first?.integer("n") == 1)
            }
        }
    }

    /// GRDB leaves a WAL pool's writer at `synchronous = NORMAL`, where a commit returns before the log
    /// is on disk; the server's commits must wait for the fsync (2 is `FULL`). Read through a write
    /// transaction, which runs on the writer connection.
    @Test("SQLite: a commit waits for the log's fsync (synchronous = FULL on the writer)")
    func sqliteCommitsAreDurable() async throws {
        try await TestWorld.withStorage(.sqlite) { storage in
            let rows = try await storage.transaction { try await $0.query("PRAGMA synchronous") }
            #expect(try rows.first?.integer("synchronous") == 2)
        }
    }

    @Test(
        "every read sees the newest commit, whichever connection serves it; an SQLite read cannot write",
        arguments: TestBackend.allCases)
    func readsSeeCommits(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            _ = try await storage.transaction { try await $0.query(Self.create("statement_newest (n {int})", $0)) }
            _ = try await storage.transaction {
                try await $0.query("INSERT INTO statement_newest (n) VALUES (?)", .integer(0))
            }
            // More rounds than SQLite has read-only connections (SQLiteReaders), so each serves several.
            for round in 1...24 {
                _ = try await storage.transaction {
                    try await $0.query("UPDATE statement_newest SET n = ?", .integer(Int64(round)))
                }
                let rows = try await storage.read { try await $0.query("SELECT n FROM statement_newest") }
                #expect(try rows.first?.integer("n") == Int64(round))
            }
            if backend == .sqlite {
                await #expect(throws: (any Error).self) {
                    try await storage.read { try await $0.query("UPDATE statement_newest SET n = ?", .integer(-1)) }
                }
            }
        }
    }

    /// `CREATE TABLE` in the transaction's dialect (`{int}`, `{blob}` as the migrations write them).
    static func create(_ table: String, _ transaction: any SQLTransaction) -> String {
        Migrations.statements(["CREATE TABLE " + table], dialect: transaction.dialect)[0]
    }
}
