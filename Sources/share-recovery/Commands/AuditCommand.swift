import ArgumentParser
import Logging
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer

/// `audit …`: the reference server's audit trail, read from its database.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Verify and read a reference server's audit trail (from its database).",
        discussion: helpText(
            "The server appends one row per security-relevant event (tokens minted, wrong one-time codes, methods added, rotated or deleted, cipherTexts read, backups and recoveries started, completed, failed or aborted, custodian shares served, wallets created, signature shares released) to its account's hash chain in its database, and anchors every few seconds over the heads of all chains (docs/server.md, \"Audit trail\"). These commands read the database directly and change nothing; no row holds a secret.",
            examples: [
                "share-recovery audit verify --database share-recovery.sqlite",
                "share-recovery audit list --database share-recovery.sqlite --account user-1",
            ]),
        subcommands: [Verify.self, List.self])

    /// Where the database is.
    struct DatabaseOptions: ParsableArguments {
        @Option(help: "The server's SQLite file, or its postgres://user:pass@host:port/db URL.")
        var database: String

        func withStorage<Result: Sendable>(_ body: (any ServerStorage) async throws -> Result) async throws -> Result {
            var logger = Logger(label: "share-recovery-audit")
            logger.logLevel = .critical
            return try await AuditTrail.withDatabase(ServeCommand.database(database), logger: logger, body)
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Walk the hash chains; exit 1 naming the first deleted, edited or reordered row.",
            discussion: helpText(
                "Checks the anchors, then every account's chain: each row's hash against its fields, the numbering for gaps, each row's link to the one before, that each chain still holds the row its newest anchor names and ends where its head record says. Rows written before the per-account chains form one chain, checked as before and named by the first anchor. Intact: prints {\"intact\": true, \"rows\": N, \"chains\": C, \"anchors\": A, \"unanchored\": U, \"head\": {\"sequence\", \"hash\", \"anchor\"}} and exits 0. Broken: `error: <code>: <reason>` on stderr naming the chain and row (rowEdited, rowsMissing, rowsReordered, brokenLink, anchorMismatch, headMismatch) and exit 1.\n\nThe database cannot show that it was rewritten as a whole (anchors included): keep the printed head's anchor (anchor:<sequence>:<hash>) somewhere the database's users cannot write (a ticket, another system's log) and pass it back with --anchor; that anchor must still be there, with that hash. Rows newer than the newest anchor (\"unanchored\") are vouched for only by their chains' head records (docs/server.md, \"What verify detects\"). An anchor is a sequence and a hash, not a secret.",
                examples: [
                    "share-recovery audit verify --database share-recovery.sqlite",
                    "share-recovery audit verify --database share-recovery.sqlite --anchor \"$(cat last.anchor)\"",
                    "share-recovery audit verify --database postgres://recovery:secret@127.0.0.1:5432/recovery",
                ]))
        @OptionGroup var databaseOptions: DatabaseOptions
        @Option(
            help:
                "A head printed by an earlier verify, anchor:<sequence>:<hash> (or <sequence>:<hash> from a release before the per-account chains), that must still be there (repeatable)."
        )
        var anchor: [String] = []

        func run() async throws {
            let anchors = try anchor.map { text in
                guard let anchor = AuditAnchor(text) else {
                    throw CLIError.usage(
                        "--anchor must be anchor:<sequence>:<64 hex digits> (or <sequence>:<64 hex digits>), as printed in head by an earlier verify"
                    )
                }
                return anchor
            }
            let verified = try await databaseOptions.withStorage { try await AuditTrail.verify($0, anchors: anchors) }
            let head: JSONValue =
                verified.head.map {
                    .object([
                        ("sequence", .number(String($0.sequence))), ("hash", .string(Hex.encode($0.hash))),
                        ("anchor", .string($0.text)),
                    ])
                } ?? .null
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("intact", .bool(true)), ("rows", .number(String(verified.count))),
                        ("chains", .number(String(verified.chains))), ("anchors", .number(String(verified.anchors))),
                        ("unanchored", .number(String(verified.unanchored))), ("head", head),
                    ])))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "One account's events, oldest first, a page at a time.",
            discussion: helpText(
                "Prints the page as GET /users/{userId}/audit-events answers it: {\"events\": [{\"sequence\", \"time\", \"event\", \"requestId\", \"detail\", \"hash\"}], \"nextCursor\"}; pass nextCursor back with --after for the next page.",
                examples: [
                    "share-recovery audit list --database share-recovery.sqlite --account user-1",
                    "share-recovery audit list --database share-recovery.sqlite --account user-1 --limit 20 --after 0000000000000014",
                ]))
        @OptionGroup var databaseOptions: DatabaseOptions
        @Option(help: "The user (client) id.") var account: String
        @Option(help: "A nextCursor from the previous page.") var after: String?
        @Option(help: "Events per page (1…1000).") var limit = 100

        func run() async throws {
            guard (1...1_000).contains(limit) else { throw CLIError.usage("--limit must be from 1 to 1000") }
            var sequence: Int64 = 0
            if let after {
                guard after.utf8.count == 16, let value = Int64(after, radix: 16), value >= 0 else {
                    throw CLIError.usage("--after must be a nextCursor printed by an earlier list")
                }
                sequence = value
            }
            let page = try await databaseOptions.withStorage { [account, limit] storage in
                try await AuditTrail.page(storage, account: account, after: sequence, limit: limit)
            }
            Terminal.output(JSONWriter.write(page))
        }
    }
}
