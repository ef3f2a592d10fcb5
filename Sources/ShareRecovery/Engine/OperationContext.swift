import ShareCrypto

/// What an engine operation in flight tells the sources and custodians it calls, without knowing
/// how they reach their servers: the operation's request id, which a network client sends with
/// every request (so a server's logs and audit rows name the same id the app shows to support), and
/// where a client reports that it is trying a call again.
///
/// The engine sets it for the duration of a recovery (a task-local value, so it reaches every call
/// the operation makes and nothing else); a client reads ``current``. Outside an operation it is `nil`.
public struct OperationContext: Sendable {
    /// A retry a client is about to make: the attempt number it starts (2 for the first retry) and why
    /// the previous attempt failed (an HTTP status or a connection failure; never a secret).
    public struct Retry: Sendable, Equatable {
        /// The attempt about to start (the first attempt is 1, so a retry is 2 or more).
        public let attempt: Int
        /// Why the previous attempt failed.
        public let reason: String

        /// Creates a retry notice.
        public init(attempt: Int, reason: String) {
            self.attempt = attempt
            self.reason = reason
        }
    }

    /// The operation's id: 32 lowercase hex digits from the system's random source.
    public let requestId: String
    private let onRetry: @Sendable (Retry) -> Void

    /// The operation this task belongs to, if any.
    @TaskLocal public static var current: OperationContext?

    /// Creates a context.
    /// - Parameters:
    ///   - requestId: The operation's id (a fresh random one by default).
    ///   - onRetry: Told each retry a client makes within the operation.
    public init(
        requestId: String = OperationContext.newRequestId(), onRetry: @escaping @Sendable (Retry) -> Void = { _ in }
    ) {
        self.requestId = requestId
        self.onRetry = onRetry
    }

    /// A client is about to try a call again.
    public func noteRetry(_ retry: Retry) { onRetry(retry) }

    /// A fresh id: 16 bytes of the system's random source as lowercase hex. (Never the engine's
    /// injected random source: ids must not shift the draws that a seeded test depends on.)
    public static func newRequestId() -> String { Hex.encode(SystemRandom().bytes(count: 16)) }
}
