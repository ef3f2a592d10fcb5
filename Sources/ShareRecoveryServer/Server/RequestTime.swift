import Hummingbird
import ShareCrypto

/// The one time a request decides by (ServerStorage+Clock.swift): read at its first use, then kept, so
/// a token's expiry, a session's and the request's audit rows all see the same second, and a request
/// costs PostgreSQL at most one clock read.
final class RequestTime: Sendable {
    private let seconds = Locked<Int64?>(nil)

    /// The running request's time, `nil` outside a request (background work reads the clock each time).
    @TaskLocal static var current: RequestTime?

    /// The kept time, or `read`'s, kept from now on.
    func value(_ read: () async throws -> Int64) async throws -> Int64 {
        if let kept = seconds.withLock({ $0 }) { return kept }
        let fresh = try await read()
        // Two concurrent first reads of one request (rare): the first kept wins, so all agree.
        return seconds.withLock { kept in
            if let kept { return kept }
            kept = fresh
            return fresh
        }
    }
}

/// Gives every request its ``RequestTime``.
struct RequestTimeMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        try await RequestTime.$current.withValue(RequestTime()) { try await next(request, context) }
    }
}
