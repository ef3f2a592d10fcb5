import Hummingbird

/// Counts every answered request and its latency in ``ServerMetrics``, by the route's template
/// (`/users/{userId}/user-backup-share`, never a concrete path, which would name a user), method and
/// final status. It sits outside the error middleware, so an error is counted with the status the
/// client got. (Hummingbird's own `MetricsMiddleware` records through the process-wide metrics
/// system; this server keeps a registry per server, see ``ServerMetrics``.)
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        let status: Int
        let outcome: Result<Response, any Error>
        do {
            let response = try await next(request, context)
            status = Int(response.status.code)
            outcome = .success(response)
        } catch {
            // Only what the error middleware does not turn into an answer reaches here.
            status = (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500
            outcome = .failure(error)
        }
        let elapsed = ContinuousClock.now - started
        let nanoseconds =
            UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000)
        metrics.request(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status,
            nanoseconds: nanoseconds)
        return try outcome.get()
    }
}
