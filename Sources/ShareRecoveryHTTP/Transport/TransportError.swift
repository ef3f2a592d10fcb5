public import ShareRecovery

/// Why a call over HTTP failed, in this module's own words: the API refused it, or the server could
/// not be reached in time. The engine knows nothing of HTTP, so these codes are not
/// `ShareRecoveryError` codes; an engine call that went through one of this module's clients
/// passes a `TransportError` through unchanged.
///
/// A server answer that names a check the engine also runs (a format or resharing check, e.g.
/// `malformedCipherText` or `subShareCheckFailed`) is not a transport failure: it comes out as the
/// `ShareRecoveryError` of that code, so a remote custodian fails exactly like an in-process one. A
/// 404 is `ShareRecoveryError` `notFound`, the engine's word for a missing cipherText or session.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable code. The API's refusals keep the server's code name.
    public enum Code: String, Sendable, CaseIterable {
        /// No valid credentials: a missing, expired, forged or spent token, or a wrong webhook secret (HTTP 401).
        case unauthorized
        /// Credentials for another user or purpose (HTTP 403).
        case forbidden
        /// A one-time code that does not match its flow; the flow ends after five (HTTP 401).
        case wrongCode
        /// A flow that expired, was used, or ended after too many wrong codes: start a new one (HTTP 410).
        case flowEnded
        /// Too many attempts for an identifier or address: wait, then retry (HTTP 429).
        case rateLimited
        /// A request that does not fit the resource's state, e.g. a session round applied twice (HTTP 409).
        case conflict
        /// A method the path does not take (HTTP 405): a client that does not match the server's API.
        case methodNotAllowed
        /// A request body over the server's limit (HTTP 413).
        case payloadTooLarge
        /// The server was still applying an earlier attempt of this call after every retry (HTTP 409):
        /// try again shortly; the call is applied once, whichever attempt gets its answer.
        case requestInProgress
        /// The call's `Idempotency-Key` was used for another request (HTTP 422): a client bug, as
        /// this module draws a fresh key per call.
        case idempotencyKeyReused
        /// The wallet has as many devices as the server allows (HTTP 409): remove one before adding
        /// another (docs/devices.md).
        case deviceLimitReached
        /// The wallet's signing set is older than the server allows (HTTP 409): refresh it
        /// (`RecoveryEngine.refresh`, the CLI's `refresh --server`), then sign again.
        case refreshRequired
        /// Any other 4xx: the same request fails again, so it is never retried. ``TransportError/serverCode``
        /// holds the server's own code, if it sent one.
        case requestRejected
        /// Every attempt failed: refused or reset connections, or 5xx answers.
        case unavailable
        /// The call's deadline passed, retries included.
        case timedOut
        /// The bearer-token provider the client was configured with threw; no request was sent.
        case tokenProviderFailed
    }

    /// The stable code.
    public let code: Code
    /// What happened, for people: the operation, the HTTP status and the server's message. Never a
    /// token, secret or share.
    public let reason: String
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// The server's error code, when its answer had the API's error shape.
    public let serverCode: String?
    /// How long the server asked the client to wait before trying again (its `Retry-After`, on a
    /// 429 ``Code/rateLimited``), in seconds.
    public let retryAfterSeconds: Int?

    /// Creates an error.
    public init(
        _ code: Code, _ reason: String, status: Int? = nil, serverCode: String? = nil, retryAfterSeconds: Int? = nil
    ) {
        self.code = code
        self.reason = reason
        self.status = status
        self.serverCode = serverCode
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Whether trying the same call again later may succeed without changing it.
    public var isTransient: Bool { [.unavailable, .timedOut, .rateLimited, .requestInProgress].contains(code) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code.rawValue): \(reason)" }
}

extension TransportError: ActionableError {
    public var codeName: String { code.rawValue }

    /// ``isTransient``: a server that could not be reached, did not answer in time, or asked to slow down.
    public var isRetryable: Bool { isTransient }

    /// The API's refusals take their hint from `APIErrorTable`; the rest are this module's own.
    public var hint: String {
        if code == .rateLimited, let retryAfterSeconds {
            return "Too many attempts; wait \(retryAfterSeconds) seconds, then try again."
        }
        if let hint = APIErrorTable.hint(for: code) { return hint }
        switch code {
        case .unavailable, .timedOut: return "The server could not be reached; check the connection and try again."
        default: return APIErrorTable.reportHint
        }
    }
}
