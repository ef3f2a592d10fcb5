import ShareCrypto

/// Audit rows that go with no other change (a cipherText read, custodian shares served, a refused
/// step), appended by concurrent requests together on PostgreSQL: one statement and one commit for a
/// whole batch, so the batch passes the chain's head, and waits for the disk's flush, once.
///
/// Why: on PostgreSQL every audited commit moves the chain's single head, which stays locked until the
/// commit's WAL is on disk, so audited commits of every server queue behind one another's flushes
/// (docs/server.md, "Throughput"). A read that is audited has nothing to commit but its row, so many
/// of them can share one commit. Every caller still returns only once its rows are committed: nothing
/// is served unrecorded.
///
/// One batch commits at a time per server; what arrives meanwhile forms the next. A batch that fails
/// fails every caller in it, as each would have failed alone (the rows are made by the server, so a
/// failure is the database's). SQLite has none of this: its single writer already commits
/// concurrent transactions in groups (``TransactionGroups``).
package final class AuditBatches: Sendable {
    /// The most events one statement carries (six parameters each).
    static let maximumEvents = 64

    private struct Waiting: Sendable {
        let events: [AuditEvent]
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        /// Whether a task is committing batches; it takes whatever waits until nothing does.
        var draining = false
    }

    private let queue = Locked(Queue())

    package init() {}

    /// Appends `events` together with those of concurrent callers, and returns once they are
    /// committed; throws what their batch's commit threw.
    /// - Parameter commit: Commits one batch's events (in order) in one transaction. The caller that
    ///   finds the batcher idle provides it for every batch until it is idle again, so all callers of
    ///   one batcher must commit alike (each storage, counted or not, has a batcher of its own). It
    ///   runs in a task of its own, so no caller's cancellation or task-local state (an
    ///   `Idempotency-Key`, the request's trace and id) reaches it.
    func append(
        _ events: [AuditEvent], commit: @escaping @Sendable ([AuditEvent]) async throws -> Void
    ) async throws {
        guard !events.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let starts = queue.withLock { queue in
                queue.waiting.append(Waiting(events: events, continuation: continuation))
                defer { queue.draining = true }
                return !queue.draining
            }
            if starts { Task.detached { await self.drain(commit) } }
        }
    }

    /// How many callers wait for a batch (for tests).
    var waitingCount: Int { queue.withLock { $0.waiting.count } }

    private func drain(_ commit: @Sendable ([AuditEvent]) async throws -> Void) async {
        while let batch = next() {
            do {
                try await commit(batch.flatMap(\.events))
                for waiting in batch { waiting.continuation.resume() }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }

    /// The next batch, oldest callers first, at most ``maximumEvents`` events unless one caller alone
    /// has more; `nil` (and draining ends) when nobody waits.
    private func next() -> [Waiting]? {
        queue.withLock { queue in
            guard !queue.waiting.isEmpty else {
                queue.draining = false
                return nil
            }
            var count = 0
            var taken = 0
            for waiting in queue.waiting {
                guard taken == 0 || count + waiting.events.count <= Self.maximumEvents else { break }
                count += waiting.events.count
                taken += 1
            }
            defer { queue.waiting.removeFirst(taken) }
            return Array(queue.waiting.prefix(taken))
        }
    }
}
