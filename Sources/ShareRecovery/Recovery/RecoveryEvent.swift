import ShareCrypto

/// A recovery's progress as a UI shows it, beside the bare docs/formats.md §8 statuses (which stay
/// exactly as §8 fixes them): which step of how many, how long it has run, which attempt of the
/// current step's call is under way, the request id to give to support, and on failure whether
/// trying again may help and what to do.
///
/// A successful recovery emits eight `status` events, steps 1…8, the last `done`; a call that
/// fails and is tried again emits `retrying` (same step, the next attempt number) before the retry;
/// a failure emits one `failed` event and nothing after it.
public struct RecoveryEvent: Sendable, Equatable {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// A §8 status began.
        case status(RecoveryStatus)
        /// A call of the current step failed for a reason worth another try (a lost connection, a
        /// 503), and the client is trying again: the reason, never a secret.
        case retrying(reason: String)
        /// The recovery failed; nothing stored changed.
        case failed(RecoveryFailure)
    }

    /// The number of steps of a successful recovery (§8's eight statuses).
    public static let totalSteps = RecoveryStatus.sequence.count

    /// What happened.
    public let kind: Kind
    /// The §8 position of the current status, 1…`totalSteps` (for `retrying` and `failed`, the
    /// step during which it happened; 0 before the first status).
    public let step: Int
    /// Always `RecoveryEvent.totalSteps`, carried so that an event read alone (a JSON line) is whole.
    public let totalSteps: Int
    /// Time since the recovery started.
    public let elapsed: Duration
    /// The attempt of the current step's network call: 1, then 2, 3, … while a client retries.
    public let attempt: Int
    /// The operation's request id (``OperationContext/requestId``): every request the recovery made
    /// carried it, so it names the recovery in the server's logs.
    public let requestId: String
}

/// Turns one recovery's statuses, its clients' retries and its failure into ``RecoveryEvent``s, in
/// order. ``RecoveryEngine/recover(method:cipherText:secret:events:)`` uses one; so can a caller of
/// an offline recovery (``OfflineRecovery``) that wants the same events.
public struct RecoveryEventTracker: Sendable {
    /// The context to run the recovery under: its request id, and retries reported back here.
    public let context: OperationContext
    private let events: Events

    /// Creates a tracker.
    /// - Parameters:
    ///   - requestId: The recovery's request id (a fresh random one by default).
    ///   - emit: Told every event, in order.
    public init(requestId: String = OperationContext.newRequestId(), emit: @escaping @Sendable (RecoveryEvent) -> Void)
    {
        let events = Events(requestId: requestId, emit: emit)
        self.events = events
        context = OperationContext(requestId: requestId) { events.retrying($0) }
    }

    /// A §8 status began.
    public func status(_ status: RecoveryStatus) { events.status(status) }

    /// The recovery failed with `error`.
    public func failed(_ error: any Error) { events.failed(error) }

    /// The step and attempt so far, shared by the tracker and its context's retry callback.
    private final class Events: Sendable {
        private struct State {
            var nextIndex = 0
            var step = 0
            var attempt = 1
        }

        private let requestId: String
        private let start = ContinuousClock.now
        private let state = Locked(State())
        private let emit: @Sendable (RecoveryEvent) -> Void

        init(requestId: String, emit: @escaping @Sendable (RecoveryEvent) -> Void) {
            self.requestId = requestId
            self.emit = emit
        }

        func status(_ status: RecoveryStatus) {
            let step = state.withLock { state -> Int in
                // parsingShare comes twice: take the next position at or after the last one.
                let sequence = RecoveryStatus.sequence
                let index =
                    sequence[state.nextIndex...].firstIndex(of: status) ?? sequence.firstIndex(of: status)
                    ?? state.nextIndex
                state.nextIndex = min(index + 1, sequence.count)
                state.step = index + 1
                state.attempt = 1
                return state.step
            }
            send(.status(status), step: step, attempt: 1)
        }

        func failed(_ error: any Error) {
            let (step, attempt) = state.withLock { ($0.step, $0.attempt) }
            send(.failed(RecoveryFailure(error)), step: step, attempt: attempt)
        }

        func retrying(_ retry: OperationContext.Retry) {
            let step = state.withLock { state -> Int in
                state.attempt = retry.attempt
                return state.step
            }
            send(.retrying(reason: retry.reason), step: step, attempt: retry.attempt)
        }

        private func send(_ kind: RecoveryEvent.Kind, step: Int, attempt: Int) {
            emit(
                RecoveryEvent(
                    kind: kind, step: step, totalSteps: RecoveryEvent.totalSteps, elapsed: start.duration(to: .now),
                    attempt: attempt, requestId: requestId))
        }
    }
}
