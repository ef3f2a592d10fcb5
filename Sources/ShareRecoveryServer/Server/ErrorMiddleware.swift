import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ShareRecovery

/// The catch-all: every error a route throws becomes `{"error": {"code", "message"}}`. ``APIError``s keep
/// their status; Hummingbird's own errors (unknown route, oversized body) keep theirs with a matching code;
/// anything else is logged and answered with a generic 500, so no internal detail reaches clients.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try Self.response(for: error, path: request.uri.path, logger: logger)
        }
        // Tokens, codes and shares pass through here: nothing may be cached.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The answer for an error a route threw (shared with ``IdempotencyMiddleware``, which keeps that
    /// answer). Malformed HTTP is rethrown: Hummingbird answers and closes the connection itself.
    static func response(for error: any Error, path: String, logger: Logger) throws -> Response {
        switch error {
        case let error as HTTPParserError:
            throw error
        case let error as APIError:
            if error.status.code >= 500 {
                logger.error("request failed", metadata: ["path": "\(path)", "error": "\(error)"])
            }
            return JSONResponse.error(error)
        case let error as any HTTPResponseError:
            let code: APIErrorCode =
                switch error.status.code {
                case 404: .notFound
                case 405: .methodNotAllowed
                case 413: .payloadTooLarge
                case 400..<500: .malformedInput
                default: .internalError
                }
            let message = error.status.code == 404 ? "no such route" : error.status.reasonPhrase
            // A 4xx of Hummingbird's keeps its status, even where the code's own is another (a 400 family).
            let status = error.status.code >= 500 ? .internalServerError : error.status
            return JSONResponse.error(APIError(status: status, code, message))
        default:
            logger.error(
                "unexpected failure",
                metadata: ["path": "\(path)", "error": "\(String(reflecting: error))"])
            return JSONResponse.error(.internalError)
        }
    }
}

/// JSON responses.
enum JSONResponse {
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: JSONWriter.write(value))))
    }

    static func noContent() -> Response { Response(status: .noContent) }

    static func error(_ error: APIError) -> Response {
        var response = json(
            .object([
                ("error", .object([("code", .string(error.code.name)), ("message", .string(error.message))]))
            ]),
            status: error.status)
        if let seconds = error.retryAfterSeconds { response.headers[.retryAfter] = String(seconds) }
        return response
    }
}
