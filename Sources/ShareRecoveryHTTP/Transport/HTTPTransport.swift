public import AsyncHTTPClient
public import Logging
import NIOCore
package import NIOHTTP1
import ShareRecovery
import Tracing

/// The one place where this module talks HTTP: a deadline per call and per attempt, bounded retries
/// with exponential backoff and jitter, a response size limit, and the mapping of every outcome to a
/// ``TransportError`` or, where the server ran a check the engine also runs, a `ShareRecoveryError`. Every client in the module (``HTTPCipherTextSource``,
/// ``HTTPCipherTextStore``, ``HTTPCustodianShareSource``, ``HTTPCustodianBackupSink``,
/// ``HTTPCustodian``, ``HTTPWalletClient``, ``ReferenceServerClient``) sends through one of these.
///
/// Every request carries `X-Request-Id`: the id of the engine operation it belongs to
/// (`OperationContext`), else a fresh one. Every mutating request (POST, PUT, DELETE) carries an
/// `Idempotency-Key` drawn once per call and sent again with each of its retries, so a server that
/// honours it (the reference server does) applies the call at most once and answers a repeat with
/// the first answer. That is what makes retrying a lost answer safe. A POST that only reads (the
/// webhook's `/backup/fetch`) goes without one: repeating it is safe as it is.
///
/// Every call is one client span of the process's tracer (`InstrumentationSystem`; docs/server.md,
/// "Tracing"), named by its operation (`GET /users/{userId}/user-backup-share`, never a concrete path),
/// and carries that span's W3C `traceparent`, the same on each retry. Its attributes are the method,
/// the final status and the number of attempts; never a header value, a URL or a body.
///
/// Outcomes:
/// - 2xx: the body (at most ``Configuration/maximumResponseSize`` bytes, else `malformedInput`).
/// - 404: `notFound` (or the resharing code the server named, e.g. `noMatchingShare`).
/// - other 4xx: never retried; the `ShareRecoveryError` of a format or resharing check the server
///   named, the API's refusal as the ``TransportError`` of the same name (`unauthorized`,
///   `forbidden`, `rateLimited`, `conflict`, …; a 401/403 only ever yields a credential code), else
///   ``TransportError/Code/requestRejected`` with the server's code in ``TransportError/serverCode``.
///   The one exception is a 409 `requestInProgress`: the server is still applying an earlier attempt
///   of this very call, so it is retried like a lost answer.
/// - lost answers: refused, reset or closed connections, an attempt that outlives
///   ``Configuration/attemptTimeout``, and 502, 503 and 504 are retried up to
///   ``Configuration/maximumAttempts`` in all, then ``TransportError/Code/unavailable``. Any other 5xx
///   is not retried (the server failed on this request and would again): `unavailable` at once.
///   Each retry is reported to the operation's `OperationContext`.
/// - the call's deadline: ``TransportError/Code/timedOut``.
/// - task cancellation: `cancelled`.
public struct HTTPTransport: Sendable, CustomStringConvertible {
    /// Timeouts, retries and limits.
    public struct Configuration: Sendable {
        /// How long one call may take in all, retries and backoff included (default 10 s).
        public var timeout: Duration
        /// How long one attempt may wait for its whole answer before it is given up and retried
        /// (default 5 s; never beyond what is left of ``timeout``).
        public var attemptTimeout: Duration
        /// Attempts in all, the first included (default 3); at least 1 is made.
        public var maximumAttempts: Int
        /// The backoff before the second attempt; it doubles for each later attempt (default 200 ms).
        public var initialBackoff: Duration
        /// The longest backoff between two attempts (default 2 s).
        public var maximumBackoff: Duration
        /// The largest response body accepted, in bytes (default 256 KiB, the API's body limit).
        public var maximumResponseSize: Int

        /// Creates a configuration.
        /// - Parameters:
        ///   - timeout: How long one call may take in all, retries and backoff included.
        ///   - attemptTimeout: How long one attempt may wait for its answer before it is retried.
        ///   - maximumAttempts: Attempts in all, the first included.
        ///   - initialBackoff: The backoff before the second attempt.
        ///   - maximumBackoff: The longest backoff between two attempts.
        ///   - maximumResponseSize: The largest response body accepted, in bytes.
        public init(
            timeout: Duration = .seconds(10), attemptTimeout: Duration = .seconds(5), maximumAttempts: Int = 3,
            initialBackoff: Duration = .milliseconds(200), maximumBackoff: Duration = .seconds(2),
            maximumResponseSize: Int = 256 * 1024
        ) {
            self.timeout = timeout
            self.attemptTimeout = attemptTimeout
            self.maximumAttempts = maximumAttempts
            self.initialBackoff = initialBackoff
            self.maximumBackoff = maximumBackoff
            self.maximumResponseSize = maximumResponseSize
        }
    }

    /// A process-wide client that never follows redirects, so a bearer token or webhook secret is
    /// only ever sent to the host it was configured for, and that leaves retrying a failed connection
    /// to the transport's bounded policy (the client's own pool would retry until the deadline).
    /// It is never shut down.
    public static let sharedClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = false
        // The transport makes one span per call and injects its `traceparent` itself; the client's own
        // spans would record the full URL (user ids, queries) and replace that header on every attempt.
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The timeouts, retries and limits.
    public let configuration: Configuration
    let client: HTTPClient
    let logger: Logger

    /// Creates a transport.
    /// - Parameters:
    ///   - configuration: Timeouts, retries and limits.
    ///   - client: The HTTP client; the caller owns its lifecycle. A client of your own should not
    ///     follow redirects, or credentials may reach another host, and should not retry connection
    ///     establishment itself (see ``sharedClient``).
    ///   - logger: Where requests are logged (operation, attempt, status; never headers or bodies).
    ///     Silent by default.
    public init(
        configuration: Configuration = Configuration(), client: HTTPClient = HTTPTransport.sharedClient,
        logger: Logger = Logger(label: "ShareRecoveryHTTP", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
    }

    /// The limits, for logs.
    public var description: String {
        "HTTPTransport(timeout: \(configuration.timeout), attemptTimeout: \(configuration.attemptTimeout), "
            + "attempts: \(configuration.maximumAttempts), "
            + "maximumResponseSize: \(configuration.maximumResponseSize))"
    }

    // MARK: Sending

    /// Sends a call with retries until it succeeds, fails for good, or the deadline passes.
    /// - Returns: The status (2xx) and body of the response.
    /// - Throws: ``TransportError`` or `ShareRecoveryError`, as described on the type.
    func send(_ call: HTTPCall) async throws -> HTTPReply {
        guard call.url.hasPrefix("http://") || call.url.hasPrefix("https://") else {
            throw ShareRecoveryError(.invalidParameters, "\(call.operation): the base URL must be http:// or https://")
        }
        return try await withSpan(call.operation, ofKind: .client) { span in
            var call = call
            InstrumentationSystem.instrument.inject(span.context, into: &call.headers, using: CallHeaderInjector())
            if span.isRecording { span.attributes["http.request.method"] = call.method.rawValue }
            do {
                let reply = try await send(call, span: span)
                if span.isRecording { span.attributes["http.response.status_code"] = reply.status }
                return reply
            } catch {
                if span.isRecording {
                    span.setStatus(.init(code: .error))
                    span.updateAttributes { attributes in
                        attributes["error.type"] =
                            (error as? TransportError)?.codeName ?? (error as? ShareRecoveryError)?.codeName
                            ?? "\(type(of: error))"
                        if let status = (error as? TransportError)?.status {
                            attributes["http.response.status_code"] = status
                        }
                    }
                }
                throw error
            }
        }
    }

    /// ``send(_:)`` inside its span: the retries.
    private func send(_ call: HTTPCall, span: any Span) async throws -> HTTPReply {
        var call = call
        let operation = OperationContext.current
        call.headers.append(
            .init(name: "X-Request-Id", value: operation?.requestId ?? OperationContext.newRequestId(), isSecret: false)
        )
        if call.method != .get, call.sendsIdempotencyKey {
            // One key for the call, the same on every retry: the server applies the call once.
            call.headers.append(.init(name: "Idempotency-Key", value: OperationContext.newRequestId(), isSecret: false))
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: configuration.timeout)
        let attempts = max(configuration.maximumAttempts, 1)
        var attempt = 1
        while true {
            if Task.isCancelled { throw ShareRecoveryError(.cancelled, "\(call.operation) was cancelled") }
            if span.isRecording { span.attributes["share_recovery.attempts"] = attempt }
            let outcome = await self.attempt(call, deadline: deadline)
            if Task.isCancelled { throw ShareRecoveryError(.cancelled, "\(call.operation) was cancelled") }
            let failure: String
            var failureStatus: Int?
            switch outcome {
            case .reply(let reply):
                logger.debug("reply", metadata: call.metadata(attempt: attempt, status: reply.status))
                switch reply.status {
                case 200..<300: return reply
                case 404:
                    throw ServerErrorMapping.notFound(call.operation, reply, quotingMessage: call.quotesServerMessage)
                case 409 where ServerErrorMapping.serverCode(reply) == Self.requestInProgress:
                    failure = "HTTP 409 (\(Self.requestInProgress))"
                case 400..<500:
                    throw ServerErrorMapping.rejected(call.operation, reply, quotingMessage: call.quotesServerMessage)
                case 502, 503, 504:
                    failureStatus = reply.status
                    failure = "HTTP \(reply.status)\(ServerErrorMapping.serverCode(reply).map { " (\($0))" } ?? "")"
                case 500..<600:
                    throw TransportError(
                        .unavailable,
                        "\(call.operation) failed: HTTP \(reply.status)\(ServerErrorMapping.serverCode(reply).map { " (\($0))" } ?? "")",
                        status: reply.status, serverCode: ServerErrorMapping.serverCode(reply))
                default:
                    throw TransportError(
                        .requestRejected, "\(call.operation): unexpected HTTP status \(reply.status)",
                        status: reply.status)
                }
            case .retryable(let reason):
                logger.debug("connection failure", metadata: call.metadata(attempt: attempt, status: nil))
                failure = reason
            case .attemptTimedOut:
                logger.debug("attempt timed out", metadata: call.metadata(attempt: attempt, status: nil))
                failure = "no answer within \(configuration.attemptTimeout)"
            case .timedOut:
                throw Self.timeout(call, after: configuration.timeout, last: nil)
            case .failed(let error):
                throw error
            }
            guard attempt < attempts else {
                throw TransportError(
                    .unavailable, "\(call.operation) failed after \(attempts) attempts: \(failure)",
                    status: failureStatus)
            }
            let delay = backoff(beforeAttempt: attempt + 1)
            guard clock.now.advanced(by: delay) < deadline else {
                throw Self.timeout(call, after: configuration.timeout, last: failure)
            }
            logger.debug("retrying", metadata: call.metadata(attempt: attempt, status: nil))
            operation?.noteRetry(.init(attempt: attempt + 1, reason: "\(call.operation): \(failure)"))
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw ShareRecoveryError(.cancelled, "\(call.operation) was cancelled")
            }
            attempt += 1
        }
    }

    private static func timeout(_ call: HTTPCall, after timeout: Duration, last: String?) -> TransportError {
        TransportError(
            .timedOut, "\(call.operation) timed out after \(timeout)\(last.map { " (last failure: \($0))" } ?? "")")
    }

    /// Exponential backoff with "equal jitter": half the step fixed, half random, so a fleet of
    /// clients that failed together does not retry together.
    private func backoff(beforeAttempt attempt: Int) -> Duration {
        let step = min(configuration.initialBackoff * (1 << min(attempt - 2, 20)), configuration.maximumBackoff)
        return step * Double.random(in: 0.5...1.0)
    }

    /// The server's code for "an earlier attempt of this call is still being applied" (409).
    static let requestInProgress = "requestInProgress"

    private enum Outcome: Sendable {
        case reply(HTTPReply)
        case retryable(String)
        /// This attempt's own time ran out; the call's deadline has not passed.
        case attemptTimedOut
        case timedOut
        case failed(ShareRecoveryError)
    }

    /// One attempt, raced against its own time limit and the call's deadline (the client's own
    /// deadline only covers the response head, not the body).
    private func attempt(_ call: HTTPCall, deadline: ContinuousClock.Instant) async -> Outcome {
        let attemptEnd = ContinuousClock.now.advanced(by: configuration.attemptTimeout)
        let end = min(attemptEnd, deadline)
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask { await self.exchange(call, deadline: end) }
            group.addTask {
                do {
                    try await Task.sleep(until: end, clock: .continuous)
                    return end < deadline ? .attemptTimedOut : .timedOut
                } catch {
                    return nil
                }
            }
            var result: Outcome = .failed(ShareRecoveryError(.cancelled, "\(call.operation) was cancelled"))
            for await outcome in group {
                guard let outcome else { continue }
                result = outcome
                break
            }
            group.cancelAll()
            return result
        }
    }

    private func exchange(_ call: HTTPCall, deadline: ContinuousClock.Instant) async -> Outcome {
        var request = HTTPClientRequest(url: call.url)
        request.method = call.method.nio
        request.headers.add(name: "Accept", value: "application/json")
        for header in call.headers { request.headers.add(name: header.name, value: header.value) }
        if let body = call.body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let remaining = ContinuousClock().now.duration(to: deadline)
        let status: Int
        do {
            let response = try await client.execute(request, deadline: .now() + remaining.timeAmount, logger: logger)
            status = Int(response.status.code)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0) }.flatMap {
                $0 >= 0 ? $0 : nil
            }
            do {
                let buffer = try await response.body.collect(upTo: configuration.maximumResponseSize)
                return .reply(
                    HTTPReply(status: status, body: Array(buffer.readableBytesView), retryAfterSeconds: retryAfter))
            } catch is NIOTooManyBytesError {
                guard (200..<300).contains(status) else {
                    // An oversize error page: keep the status, drop the page.
                    return .reply(HTTPReply(status: status, body: []))
                }
                return .failed(
                    ShareRecoveryError(
                        .malformedInput,
                        "\(call.operation): the response body exceeds \(configuration.maximumResponseSize) bytes"))
            }
        } catch {
            return classify(error, call: call)
        }
    }

    private func classify(_ error: any Error, call: HTTPCall) -> Outcome {
        if let error = error as? ShareRecoveryError { return .failed(error) }
        if let error = error as? HTTPClientError {
            // The client's deadline is this attempt's end: the call's own deadline is the timer's.
            if error == .deadlineExceeded { return .retryable("no answer within \(configuration.attemptTimeout)") }
            if error == .cancelled {
                return .failed(ShareRecoveryError(.cancelled, "\(call.operation) was cancelled"))
            }
            if Self.permanentClientErrors.contains(error) {
                return .failed(ShareRecoveryError(.invalidParameters, "\(call.operation): \(error)"))
            }
        }
        if error is CancellationError {
            return .failed(ShareRecoveryError(.cancelled, "\(call.operation) was cancelled"))
        }
        // Refused, reset or closed connections, truncated bodies, connect timeouts: worth another try.
        return .retryable(String(describing: error))
    }

    /// Client errors that another attempt cannot fix: the request or configuration is wrong.
    private static let permanentClientErrors: [HTTPClientError] = [
        .invalidURL, .emptyHost, .emptyScheme, .missingSocketPath, .alreadyShutdown, .invalidRedirectConfiguration,
        .invalidHTTPVersionConfiguration, .invalidDNSOverridesConfiguration, .invalidLocalAddress,
        .invalidProxyConfiguration, .traceRequestWithBody,
    ]
}

/// One HTTP request as this module describes it; secret header values never appear in its description.
struct HTTPCall: Sendable, CustomStringConvertible {
    enum Method: String, Sendable {
        case get = "GET", put = "PUT", post = "POST", delete = "DELETE"

        var nio: HTTPMethod {
            switch self {
            case .get: .GET
            case .put: .PUT
            case .post: .POST
            case .delete: .DELETE
            }
        }
    }

    struct Header: Sendable {
        let name: String
        let value: String
        /// Bearer tokens and webhook secrets: never logged or described.
        let isSecret: Bool
    }

    let method: Method
    let url: String
    /// A name for logs and error reasons, without identifiers or query: `GET /users/{userId}/user-backup-share`.
    let operation: String
    var headers: [Header] = []
    var body: [UInt8]?
    /// Whether an error's reason may quote the server's message: not where the server may echo what
    /// the client sent and that is a secret (a one-time code).
    var quotesServerMessage = true
    /// Whether a mutating call carries an `Idempotency-Key`: not a POST that only reads (the webhook's
    /// `/backup/fetch`), which is safe to repeat as it is, and whose key would cost the server a claim
    /// and a kept answer for nothing.
    var sendsIdempotencyKey = true

    var description: String {
        let headerText = headers.map { "\($0.name): \($0.isSecret ? "<redacted>" : $0.value)" }.joined(separator: ", ")
        return "\(operation) [\(headerText)]\(body.map { " (\($0.count) bytes)" } ?? "")"
    }

    func metadata(attempt: Int, status: Int?) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["operation": "\(operation)", "attempt": "\(attempt)"]
        if let status { metadata["status"] = "\(status)" }
        return metadata
    }
}

/// Writes the trace headers of a call's span among its (non-secret) headers.
private struct CallHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [HTTPCall.Header]) {
        carrier.append(.init(name: key, value: value, isSecret: false))
    }
}

/// Writes trace headers into an AsyncHTTPClient request made outside the transport (the server's OTP webhook).
package struct HTTPHeadersInjector: Injector {
    package init() {}

    package func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.replaceOrAdd(name: key, value: value)
    }
}

/// A response as the transport hands it back.
struct HTTPReply: Sendable {
    let status: Int
    let body: [UInt8]
    /// The `Retry-After` header in seconds (a 429's), when it is a plain number; an HTTP date is ignored.
    var retryAfterSeconds: Int? = nil
}

extension Duration {
    /// The same span as a NIO `TimeAmount` (never negative).
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow else { return .nanoseconds(seconds < 0 ? 0 : .max) }
        return .nanoseconds(max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
