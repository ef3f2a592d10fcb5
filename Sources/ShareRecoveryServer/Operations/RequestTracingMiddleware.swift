import HTTPTypes
import Hummingbird
import Tracing

/// One server span per request (docs/server.md, "Tracing"), in the trace of a well-formed incoming W3C
/// `traceparent` (a malformed one is ignored: a new trace starts, the request is answered as ever). The
/// outermost middleware, so the span covers everything, and its status is the one the client got.
///
/// Named `{method} {route template}` (`POST /recovery/sessions`, `GET /users/{userId}/user-backup-share`)
/// once the router matched, else `{method}`. Attributes: `http.request.method`, `http.route`,
/// `http.response.status_code`, `share_recovery.request_id` and, for a 5xx, `error.type`. Never the
/// concrete path (it names users and flows), the query, a header or a body, so no token or secret
/// can reach a span. Probes and scrapes (`/health`, `/ready`, `/metrics`) are not traced: they would
/// flood a trace store with spans nobody reads, and must stay cheap.
struct RequestTracingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    /// Paths answered without a span.
    static let untracedPaths: Set<String> = ["/health", "/ready", "/metrics"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if Self.untracedPaths.contains(request.uri.path) { return try await next(request, context) }
        var parent = InstrumentationContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HTTPFieldsExtractor())
        let span = startSpan(request.method.rawValue, context: parent, ofKind: .server)
        defer { span.end() }
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            if span.isRecording {
                record(
                    span, request, context, status: Int(response.status.code),
                    requestId: response.headers[RequestID.header])
            }
            return response
        } catch {
            // Only what the error middleware does not turn into an answer reaches here.
            if span.isRecording {
                record(
                    span, request, context,
                    status: (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500,
                    requestId: nil)
                span.recordError(error)
            }
            throw error
        }
    }

    private func record(_ span: any Span, _ request: Request, _ context: Context, status: Int, requestId: String?) {
        if let route = context.endpointPath { span.operationName = "\(request.method.rawValue) \(route)" }
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            attributes["http.route"] = context.endpointPath
            attributes["http.response.status_code"] = status
            attributes["share_recovery.request_id"] = requestId
            if status >= 500 { attributes["error.type"] = "\(status)" }
        }
        if status >= 500 { span.setStatus(.init(code: .error)) }
    }
}

/// Reads one header of an incoming request for the tracer.
private struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}
