import ShareCrypto
import Testing

@testable import ShareRecoveryServer

/// Audit rows with no other change, joined on PostgreSQL (docs/server.md, "Audit trail"): callers that
/// arrive while a batch commits form the next one, each returns only once its own batch committed, and
/// a failed batch fails its callers and no one else.
@Suite("Audit batches", .timeLimit(.minutes(1)))
struct AuditBatchesTests {
    @Test(
        "callers that wait while a batch commits are committed together, at most 64 events a batch, each after its batch"
    )
    func joining() async throws {
        let batches = AuditBatches()
        let log = CommitLog()
        let first = Task { try await batches.append([Self.event(0)], commit: log.commit) }
        try await Self.until { log.batches.count == 1 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 1...100 {
                group.addTask {
                    try await batches.append([Self.event(index)], commit: log.commit)
                    // Returned only after the commit that held this event ended.
                    #expect(log.committed.contains("r\(index)"))
                }
            }
            try await Self.until { batches.waitingCount == 100 }
            log.open()
            try await group.waitForAll()
        }
        try await first.value
        let committed = log.batches
        #expect(committed.map(\.count) == [1, 64, 36])
        #expect(Set(committed.joined()) == Set((0...100).map { "r\($0)" }))
        #expect(batches.waitingCount == 0)
    }

    @Test("a failed batch fails its callers, and the callers waiting behind it are committed")
    func failure() async throws {
        let batches = AuditBatches()
        let log = CommitLog(failing: "r0")
        let first = Task { try await batches.append([Self.event(0)], commit: log.commit) }
        try await Self.until { log.batches.count == 1 }
        let later = (1...3).map { index in Task { try await batches.append([Self.event(index)], commit: log.commit) } }
        try await Self.until { batches.waitingCount == 3 }
        log.open()
        await #expect(throws: CommitLog.Refused.self) { try await first.value }
        for task in later { try await task.value }
        #expect(log.batches.map(\.count) == [1, 3])
    }

    @Test("callers are committed oldest first, and a batcher that went idle starts again")
    func orderAndRestart() async throws {
        let batches = AuditBatches()
        let log = CommitLog()
        var tasks = [Task { try await batches.append([Self.event(0)], commit: log.commit) }]
        try await Self.until { log.batches.count == 1 }
        for index in 1...3 {
            tasks.append(Task { try await batches.append([Self.event(index)], commit: log.commit) })
            try await Self.until { batches.waitingCount == index }
        }
        log.open()
        for task in tasks { try await task.value }
        #expect(log.batches == [["r0"], ["r1", "r2", "r3"]])
        try await batches.append([Self.event(4)], commit: log.commit)
        #expect(log.batches.last == ["r4"])
    }

    @Test("one caller's events stay together in one batch, even beyond 64")
    func largeCaller() async throws {
        let batches = AuditBatches()
        let log = CommitLog()
        log.open()
        try await batches.append((0..<70).map(Self.event), commit: log.commit)
        #expect(log.batches.map(\.count) == [70])
    }

    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(.cipherTextRead, account: "a", requestId: "r\(index)", at: Int64(index))
    }

    /// Polls `condition` (another task's progress) for up to 10 s.
    static func until(_ condition: @Sendable () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }
}

/// A commit that records each batch's request ids as it starts, holds every batch until ``open()``, and
/// records the ids again as it ends.
private final class CommitLog: Sendable {
    struct Refused: Error {}

    private let state = Locked<(batches: [[String]], committed: Set<String>, open: Bool)>(([], [], false))
    private let failing: String?

    init(failing: String? = nil) { self.failing = failing }

    var batches: [[String]] { state.withLock { $0.batches } }
    var committed: Set<String> { state.withLock { $0.committed } }

    func open() { state.withLock { $0.open = true } }

    @Sendable func commit(_ events: [AuditEvent]) async throws {
        state.withLock { $0.batches.append(events.map(\.requestId)) }
        while !state.withLock({ $0.open }) { try await Task.sleep(for: .milliseconds(1)) }
        if let failing, events.contains(where: { $0.requestId == failing }) { throw Refused() }
        state.withLock { $0.committed.formUnion(events.map(\.requestId)) }
    }
}
