import HTTPTypes
import Hummingbird
import ShareCrypto
import ShareRecovery

/// The per-request id: an incoming `X-Request-Id` when it is well formed (a proxy's or a client's,
/// so one id follows a request across systems), else a fresh random one. It is echoed in the
/// `X-Request-Id` header of every response, errors included, and stored in every audit row the
/// request appends, so an audit row, a log line and a client's report name the same request.
enum RequestID {
    static let header = HTTPField.Name("X-Request-Id")!
    /// Longest id accepted from a client (a UUID is 36, a W3C trace id 32).
    static let maximumLength = 64

    /// 32 lowercase hex digits of fresh randomness.
    static func generate() -> String { Hex.encode(SystemRandom().bytes(count: 16)) }

    /// The incoming id when there is exactly one and it is 1…64 of `A–Z a–z 0–9 . _ : -`: nothing that
    /// could break a log line, a header or a query. Anything else is ignored, not refused: a bad
    /// tracing header must not fail a request.
    static func accepted(_ request: Request) -> String? {
        let values = request.headers[values: header]
        guard values.count == 1, isWellFormed(values[0]) else { return nil }
        return values[0]
    }

    static func isWellFormed(_ text: String) -> Bool {
        (1...maximumLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                    UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

/// Sets ``ServerRequestContext/requestId``, echoes it, and runs the request under an
/// `OperationContext` of that id, so that the calls the server makes on the request's behalf (the
/// integrator's fetch webhook, through the HTTP transport) send it on. The outermost middleware, so
/// the error middleware's answers carry the header too.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let requestId = RequestID.accepted(request) ?? RequestID.generate()
        context.requestId = requestId
        // The calls the server makes for this request (the integrator's webhook) carry the same id.
        var response = try await OperationContext.$current.withValue(OperationContext(requestId: requestId)) {
            try await next(request, context)
        }
        response.headers[RequestID.header] = requestId
        return response
    }
}
