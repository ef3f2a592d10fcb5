import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// ``RecoveryEvent``s beside the §8 statuses: step of eight, elapsed time, attempt, request id, and
/// on failure whether to retry and what to do.
@Suite("Recovery events")
struct RecoveryEventTests {
    typealias World = RecoveryEngineTests.World

    final class EventLog: Sendable {
        private let events = Locked<[RecoveryEvent]>([])
        func append(_ event: RecoveryEvent) { events.withLock { $0.append(event) } }
        var all: [RecoveryEvent] { events.withLock { $0 } }
        var statuses: [RecoveryStatus] {
            all.compactMap { if case .status(let status) = $0.kind { status } else { nil } }
        }
    }

    /// LocalCustodian that sees the operation's context: it records the request id it was called
    /// under, and at open plays a client that lost one answer and tries again.
    actor ObservingCustodian: Custodian {
        let inner: LocalCustodian
        private(set) var requestIds: [String?] = []

        init(_ inner: LocalCustodian) { self.inner = inner }

        func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
            requestIds.append(OperationContext.current?.requestId)
            OperationContext.current?.noteRetry(.init(attempt: 2, reason: "POST /recovery/sessions: HTTP 503"))
            return try await inner.openSession(request)
        }

        func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
            requestIds.append(OperationContext.current?.requestId)
            return try await inner.finishSession(id: id, clientDealing: clientDealing)
        }

        func confirmSession(id: String) async throws {
            requestIds.append(OperationContext.current?.requestId)
            try await inner.confirmSession(id: id)
        }

        func abortSession(id: String) async { await inner.abortSession(id: id) }

        func settleSession(_ pending: PendingSession) async throws -> SessionSettlement {
            await inner.settleSession(pending)
        }
    }

    static func isRequestId(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    @Test func aRecoveryTellsEveryStepUnderOneRequestId() async throws {
        let world = try await World(seed: "events")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        let custodian = ObservingCustodian(world.custodian)
        var configuration = world.engine.configuration
        configuration.custodian = custodian
        configuration.shareStore = InMemorySigningShareStore()
        let log = EventLog()

        let recovered = try await RecoveryEngine(configuration: configuration).recover(
            method: .password, secret: .text("hunter2"), events: log.append)

        #expect(recovered.generation == 1)
        #expect(log.statuses == RecoveryStatus.sequence, "the §8 sequence, unchanged")
        let statusEvents = log.all.filter { if case .status = $0.kind { true } else { false } }
        #expect(statusEvents.map(\.step) == Array(1...8))
        #expect(log.all.allSatisfy { $0.totalSteps == 8 })
        let requestId = try #require(log.all.first?.requestId)
        #expect(Self.isRequestId(requestId))
        #expect(log.all.allSatisfy { $0.requestId == requestId })
        #expect(
            await custodian.requestIds == [requestId, requestId, requestId], "every call carries the operation's id")
        let elapsed = log.all.map(\.elapsed)
        #expect(zip(elapsed, elapsed.dropFirst()).allSatisfy { $0 <= $1 })

        // The retry at open: step 4 (recoveringSigningShare), attempt 2; the next status starts at 1.
        let retry = try #require(log.all.firstIndex { if case .retrying = $0.kind { true } else { false } })
        #expect(log.all[retry].step == 4 && log.all[retry].attempt == 2)
        #expect(log.all[retry].kind == .retrying(reason: "POST /recovery/sessions: HTTP 503"))
        #expect(log.all[retry - 1].kind == .status(.recoveringSigningShare))
        #expect(log.all[retry + 1].kind == .status(.generatingShare) && log.all[retry + 1].attempt == 1)
    }

    @Test func aWrongSecretEndsWithOneFailedEventThatIsNotWorthRetrying() async throws {
        let world = try await World(seed: "events-wrong")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        let (engine, store) = world.newDevice()
        let log = EventLog()
        await #expect(throws: ShareRecoveryError(.authenticationFailed, "")) {
            try await engine.recover(method: .password, secret: .text("hunter3"), events: log.append)
        }
        // decryptingShare derives the key; the AEAD open that fails belongs to parsingShare (docs/formats.md).
        #expect(log.statuses == [.readingShare, .decryptingShare, .parsingShare])
        let last = try #require(log.all.last)
        guard case .failed(let failure) = last.kind else {
            Issue.record("the last event is \(last.kind)")
            return
        }
        #expect(failure.code == "authenticationFailed" && !failure.isRetryable && !failure.hint.isEmpty)
        #expect(last.step == 3)
        #expect(log.all.filter { if case .failed = $0.kind { true } else { false } }.count == 1)
        #expect(await store.currentShare() == nil)
    }

    @Test func anOperationAlreadyRunningFailsAsRetryable() async throws {
        let world = try await World(seed: "events-busy")
        try await world.engine.backup(method: .password, secret: .text("hunter2"))
        let (engine, _) = world.newDevice()
        let gate = GatedCustodian(world.custodian)
        var configuration = engine.configuration
        configuration.custodian = gate
        let busy = RecoveryEngine(configuration: configuration)
        let first = Task { try await busy.recover(method: .password, secret: .text("hunter2")) }
        await gate.waitUntilOpened()
        let log = EventLog()
        await #expect(throws: ShareRecoveryError(.operationInProgress, "")) {
            try await busy.recover(method: .password, secret: .text("hunter2"), events: log.append)
        }
        await gate.release()
        _ = try await first.value
        guard case .failed(let failure)? = log.all.last?.kind else {
            Issue.record("no failed event: \(log.all)")
            return
        }
        #expect(failure.code == "operationInProgress" && failure.isRetryable)
        #expect(log.all.count == 1 && log.all[0].step == 0, "it failed before any step")
    }

    @Test func failuresOfOtherModulesAreDescribedToo() {
        let crypto = RecoveryFailure(ShareCryptoError(.invalidPoint, "not on the curve"))
        #expect(crypto.code == "invalidPoint" && !crypto.isRetryable)
        struct Foreign: Error {}
        let foreign = RecoveryFailure(Foreign())
        #expect(foreign.code == "unexpectedError" && !foreign.isRetryable && foreign.hint.contains("request id"))
        // Every engine code has a hint, and exactly the documented three are worth retrying.
        for code in ShareRecoveryError.Code.allCodes {
            let failure = RecoveryFailure(ShareRecoveryError(code, "x"))
            #expect(!failure.hint.isEmpty)
            #expect(failure.isRetryable == [.cancelled, .operationInProgress, .conflict].contains(code), "\(code)")
        }
    }
}

/// LocalCustodian that holds the first recovery at open until released.
actor GatedCustodian: Custodian {
    let inner: LocalCustodian
    private var opened: CheckedContinuation<Void, Never>?
    private var hasOpened = false
    private var gate: CheckedContinuation<Void, Never>?
    private var released = false

    init(_ inner: LocalCustodian) { self.inner = inner }

    func waitUntilOpened() async {
        if hasOpened { return }
        await withCheckedContinuation { opened = $0 }
    }

    func release() {
        released = true
        gate?.resume()
        gate = nil
    }

    func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
        hasOpened = true
        opened?.resume()
        opened = nil
        if !released { await withCheckedContinuation { gate = $0 } }
        return try await inner.openSession(request)
    }

    func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
        try await inner.finishSession(id: id, clientDealing: clientDealing)
    }

    func confirmSession(id: String) async throws { try await inner.confirmSession(id: id) }

    func abortSession(id: String) async { await inner.abortSession(id: id) }

    func settleSession(_ pending: PendingSession) async throws -> SessionSettlement {
        await inner.settleSession(pending)
    }
}
