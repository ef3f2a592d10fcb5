import ArgumentParser
import ShareRecovery
import ShareRecoveryServer

/// `events …`: the reference server's integrator events outbox, read and re-queued in its database.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List a reference server's integrator events and redeliver dead ones (from its database).",
        discussion: helpText(
            "The server writes one event per recovery started, completed or failed, recovery method added, rotated or deleted, device added or removed, wallet created or ejected and one-time-code flow exhausted, in the transaction of the change, and `serve --events-url` delivers them signed per Standard Webhooks (docs/server.md, \"Integrator events\"). An event whose attempts all failed is dead: it holds back none of its account's later events, and waits here for redeliver.",
            examples: [
                "share-recovery events list --database share-recovery.sqlite --state dead",
                "share-recovery events redeliver --database share-recovery.sqlite --all-dead",
            ]),
        subcommands: [List.self, Redeliver.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Events in commit order, a page at a time, filtered by state and account.",
            discussion: helpText(
                "Prints {\"events\": [{\"id\", \"sequence\", \"type\", \"account\", \"time\", \"requestId\", \"state\", \"attempts\", \"nextAttemptAt\", \"deliveredAt\", \"lastError\"}], \"nextCursor\"}; pass nextCursor back with --after for the next page (null: the last page). The event's body is what a receiver gets; lastError is a status or a transport failure, never a body.",
                examples: [
                    "share-recovery events list --database share-recovery.sqlite",
                    "share-recovery events list --database share-recovery.sqlite --state dead --account user-1",
                    "share-recovery events list --database postgres://recovery:secret@127.0.0.1:5432/recovery --state pending --limit 20",
                ]))
        @OptionGroup var databaseOptions: AuditCommand.DatabaseOptions
        @Option(help: "Only events in this state: pending, delivered or dead.") var state: String?
        @Option(help: "Only this user's (client's) events.") var account: String?
        @Option(help: "A nextCursor from the previous page.") var after: String?
        @Option(help: "Events per page (1…1000).") var limit = 100

        func run() async throws {
            guard (1...1_000).contains(limit) else { throw CLIError.usage("--limit must be from 1 to 1000") }
            if let state, !["pending", "delivered", "dead"].contains(state) {
                throw CLIError.usage("--state must be pending, delivered or dead")
            }
            var sequence: Int64 = 0
            if let after {
                guard after.utf8.count == 16, let value = Int64(after, radix: 16), value >= 0 else {
                    throw CLIError.usage("--after must be a nextCursor printed by an earlier list")
                }
                sequence = value
            }
            let page = try await databaseOptions.withStorage { [state, account, limit] storage in
                try await EventOutbox.page(storage, state: state, account: account, after: sequence, limit: limit)
            }
            Terminal.output(JSONWriter.write(page))
        }
    }

    struct Redeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue events again with fresh attempts: by id (delivered or dead), or every dead one.",
            discussion: helpText(
                "Prints {\"redelivered\": [ids]}. A running `serve --events-url` sends them within a second or two, with their first id and body, so a receiver that deduplicates by webhook-id sees a delivered event once. A re-queued event goes before its account's later pending events; those delivered already are not sent again. An id that is not a delivered or dead event fails the command (notFound) and queues nothing.",
                examples: [
                    "share-recovery events redeliver --database share-recovery.sqlite --all-dead",
                    "share-recovery events redeliver --database share-recovery.sqlite --id evt_4f1c2a9be0d35f6e7a8b9c0d1e2f3a4b",
                ]))
        @OptionGroup var databaseOptions: AuditCommand.DatabaseOptions
        @Option(help: "An event id (repeatable).") var id: [String] = []
        @Flag(help: "Every dead event.") var allDead = false

        func run() async throws {
            guard id.isEmpty != !allDead else { throw CLIError.usage("give either --id (one or more) or --all-dead") }
            let result = try await databaseOptions.withStorage { [id, allDead] storage in
                try await EventOutbox.redeliver(storage, ids: allDead ? nil : id)
            }
            Terminal.output(JSONWriter.write(result))
        }
    }
}
