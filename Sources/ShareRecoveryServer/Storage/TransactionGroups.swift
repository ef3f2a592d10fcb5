import ShareCrypto
import ShareRecovery
import Tracing

/// A backend's side of ``TransactionGroups``: one database transaction at a time.
protocol GroupTransactions: Sendable {
    /// Opens one transaction, runs `body` in it and commits; rolls back and rethrows when `body` or the
    /// commit throws.
    func inTransaction(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Void) async throws
}

/// Write transactions committed in groups (docs/server.md, "Throughput").
///
/// SQLite has one writer, so write transactions run one after another; what made that slow was each
/// paying a commit of its own, an fsync of the log (about 140 µs on this project's machine) during
/// which nobody can write. So the transactions that queue up while a group runs become the next
/// group: one database transaction,
/// each queued transaction inside its own `SAVEPOINT` (released when its body returns, rolled back to
/// when it throws, so one failure leaves the others' changes alone), and one `COMMIT` for all.
///
/// - No caller hears of success before that `COMMIT` has returned, so what it is told is durable is
///   exactly as durable as before; when the `COMMIT` fails, every transaction of the group fails.
/// - The transactions run one after another, each seeing the ones before it: the serial order they
///   had, with a shared commit. One waiting transaction makes a group of one: nothing waits to gather.
/// - PostgreSQL does not group: its transactions run concurrently on a pool, and a group would hold the
///   locks of its earlier transactions while a later one waits for another server's group, which may
///   wait for them (a deadlock the two-server concurrency test found; docs/server.md, "Throughput").
///
/// Not an actor: every `await` on an actor from the group's loop was a hop through the cooperative
/// pool's queue, behind every request waiting there, while the writer is the one thing all of them wait
/// for. Its queue is behind a lock instead, and the loop runs in one task that never changes executor
/// between `BEGIN` and `COMMIT` unless a body itself suspends.
final class TransactionGroups: Sendable {
    /// One transaction waiting for, or running in, a group.
    private struct Job: Sendable {
        let body: @Sendable (any SQLTransaction) async throws -> any Sendable
        /// The task-local values of the caller, which the body reads (the request's idempotency claim,
        /// the metrics' event collector, its request id and trace context) and the group's task lacks.
        let claim: IdempotencyClaim?
        let events: CommittedEvents?
        let operation: OperationContext?
        let context: ServiceContext?
        let finish: @Sendable (Result<any Sendable, any Error>) -> Void
    }

    /// The jobs waiting for the next group, and whether a task is running groups.
    private struct Queue {
        var waiting: [Job] = []
        var draining = false
    }

    /// What one group has done so far; touched only by the task running it.
    private struct Group {
        /// Jobs the group took (each done, or failed already).
        var taken = 0
        /// Jobs whose bodies returned, until the group commits.
        var done: [(Job, any Sendable)] = []
    }

    /// The most transactions one group takes, so a caller's wait stays bounded under any load.
    static let maximumGroup = 64

    private let backend: any GroupTransactions
    private let queue = Locked(Queue())

    init(backend: any GroupTransactions) {
        self.backend = backend
    }

    /// Runs `body` as one transaction of a group; returns once the group has committed.
    func run<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws
        -> Result
    {
        let claim = IdempotencyClaim.current, events = CommittedEvents.current
        let operation = OperationContext.current, context = ServiceContext.current
        let value = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<any Sendable, any Error>) in
            let job = Job(
                body: { try await body($0) }, claim: claim, events: events, operation: operation, context: context,
                finish: { continuation.resume(with: $0) })
            let start = queue.withLock { queue in
                queue.waiting.append(job)
                defer { queue.draining = true }
                return !queue.draining
            }
            // Detached: the groups belong to no request, so they carry none of the first one's
            // task-local values (each job gets its own caller's back in `body(of:transaction:)`).
            if start { Task.detached { await self.drain() } }
        }
        guard let result = value as? Result else {
            throw ShareRecoveryError(.storageFailure, "a transaction's result came back as another type")
        }
        return result
    }

    /// Runs groups until nothing waits.
    private func drain() async {
        while queue.withLock({ queue in
            if queue.waiting.isEmpty { queue.draining = false }
            return queue.draining
        }) {
            await runGroup()
        }
    }

    private func runGroup() async {
        let group = Locked(Group())
        do {
            try await backend.inTransaction { transaction in
                while let job = self.takeNext(into: group) {
                    try await self.runJob(job, in: transaction, group: group)
                }
            }
        } catch {
            let (finished, taken) = group.withLock { ($0.done, $0.taken) }
            for (job, _) in finished { job.finish(.failure(error)) }
            // The transaction never opened (the database is unreachable): everything waiting fails
            // alike, rather than being tried again at once.
            if taken == 0 {
                let jobs = queue.withLock { queue in
                    defer { queue.waiting = [] }
                    return queue.waiting
                }
                for job in jobs { job.finish(.failure(error)) }
            }
            return
        }
        for (job, value) in group.withLock({ $0.done }) { job.finish(.success(value)) }
    }

    /// The next waiting job, while the group has room.
    private func takeNext(into group: Locked<Group>) -> Job? {
        guard group.withLock({ $0.taken < Self.maximumGroup }) else { return nil }
        guard let job = queue.withLock({ $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }) else { return nil }
        group.withLock { $0.taken += 1 }
        return job
    }

    /// One job inside its savepoint. Its own failure is its alone; a failure to undo it means the
    /// database ended the whole transaction, which fails the group (thrown).
    private func runJob(_ job: Job, in transaction: any SQLTransaction, group: Locked<Group>) async throws {
        do {
            try await transaction.query("SAVEPOINT job")
        } catch {
            job.finish(.failure(error))
            throw error
        }
        let failure: any Error
        do {
            let value = try await Self.body(of: job, transaction: transaction)
            try await transaction.query("RELEASE job")
            group.withLock { $0.done.append((job, value)) }
            return
        } catch {
            failure = error
        }
        job.finish(.failure(failure))
        try await transaction.query("ROLLBACK TO job")
        try await transaction.query("RELEASE job")
    }

    /// The body, in the caller's task-local values, then the request's idempotency mark: the key is
    /// recorded as used in the same commit as the change.
    private static func body(of job: Job, transaction: any SQLTransaction) async throws -> any Sendable {
        try await IdempotencyClaim.$current.withValue(job.claim) {
            try await CommittedEvents.$current.withValue(job.events) {
                try await OperationContext.$current.withValue(job.operation) {
                    try await ServiceContext.withValue(job.context) {
                        let value = try await job.body(transaction)
                        try await job.claim?.markApplied(in: transaction)
                        return value
                    }
                }
            }
        }
    }
}
