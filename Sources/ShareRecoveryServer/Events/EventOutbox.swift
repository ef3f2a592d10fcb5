package import ShareRecovery

/// The operator's view of the integrator events' outbox (`share-recovery events …`): reads and
/// re-queues rows of a server's database directly, as `audit` does.
package enum EventOutbox {
    /// A page of outbox rows in commit order after `sequence`, as JSON:
    /// `{"events": [{"id", "sequence", "type", "account", "time", "requestId", "state", "attempts",
    /// "nextAttemptAt", "deliveredAt", "lastError"}], "nextCursor"}`; `nextCursor` (16 hex digits, for
    /// `--after`) is `null` on the last page.
    /// - Throws: ``ServerStartError`` `databaseNotMigrated` on a database without the outbox.
    package static func page(
        _ storage: any ServerStorage, state: String?, account: String?, after sequence: Int64, limit: Int
    ) async throws -> JSONValue {
        var stateFilter: OutboxEntry.State?
        if let state {
            guard let known = OutboxEntry.State(rawValue: state) else {
                throw ShareRecoveryError(
                    .malformedInput, "--state must be pending, delivered or dead, not \(state)")
            }
            stateFilter = known
        }
        try await requireOutbox(storage)
        let entries = try await storage.outboxEntries(
            state: stateFilter, account: account, after: sequence, limit: limit + 1)
        let shown = entries.prefix(limit)
        let next: JSONValue =
            entries.count > limit && !shown.isEmpty ? .string(cursor(shown[shown.endIndex - 1].event.sequence)) : .null
        return .object([("events", .array(shown.map(json))), ("nextCursor", next)])
    }

    /// Makes events pending again, attempts reset: those with `ids` (each must be delivered or dead),
    /// or every dead event when `ids` is `nil`.
    /// - Returns: `{"redelivered": [ids]}`.
    /// - Throws: `notFound` naming the ids that are not a delivered or dead event (none is re-queued then);
    ///   ``ServerStartError`` `databaseNotMigrated` on a database without the outbox.
    package static func redeliver(_ storage: any ServerStorage, ids: [String]?) async throws -> JSONValue {
        try await requireOutbox(storage)
        if let ids {
            let known = try await storage.outboxStates(ids: ids)
            let missing = ids.filter { known[$0] == nil || known[$0] == .pending }
            guard missing.isEmpty else {
                throw ShareRecoveryError(
                    .notFound,
                    "no delivered or dead event has the id \(missing.joined(separator: ", ")): list them with `share-recovery events list`"
                )
            }
        }
        let redelivered = try await storage.redeliverEvents(ids: ids)
        return .object([("redelivered", .array(redelivered.map(JSONValue.string)))])
    }

    /// Refuses a database whose server predates the integrator events, saying how to migrate it,
    /// rather than failing on a table that is not there.
    /// - Throws: ``ServerStartError`` `databaseNotMigrated`.
    static func requireOutbox(_ storage: any ServerStorage) async throws {
        guard try await storage.hasEventOutbox() else {
            throw ServerStartError(
                .databaseNotMigrated,
                "the database has no event_outbox table: its server predates integrator events. Run this release's `share-recovery migrate` on it (its events begin with the next server's start), then run this command again"
            )
        }
    }

    /// A `nextCursor`: the sequence as 16 hex digits.
    package static func cursor(_ sequence: Int64) -> String {
        let hex = String(sequence, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    private static func json(_ entry: OutboxEntry) -> JSONValue {
        let event = entry.event
        return .object([
            ("id", .string(event.id)), ("sequence", .number(String(event.sequence))),
            ("type", .string(event.kind.rawValue)), ("account", .string(event.account)),
            ("time", .string(RFC3339.format(event.at))), ("requestId", .string(event.requestId)),
            ("state", .string(entry.state.rawValue)), ("attempts", .number(String(entry.attempts))),
            (
                "nextAttemptAt",
                entry.state == .pending ? .string(RFC3339.format(entry.nextAttemptAt / 1_000)) : .null
            ),
            ("deliveredAt", entry.deliveredAt.map { .string(RFC3339.format($0 / 1_000)) } ?? .null),
            ("lastError", entry.lastError.map(JSONValue.string) ?? .null),
        ])
    }
}
