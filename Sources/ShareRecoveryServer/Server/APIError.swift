import HTTPTypes
import ShareRecovery

/// An error a route answers with: HTTP status, a stable ``APIErrorCode`` (clients map it back by
/// name), and a message that never carries secret bytes. Only this type reaches clients
/// as a 4xx; anything else thrown by a route becomes a generic 500.
struct APIError: Error, Sendable, CustomStringConvertible {
    let status: HTTPResponse.Status
    let code: APIErrorCode
    let message: String
    /// Sent as `Retry-After`: how many seconds a rate-limited client waits before trying again.
    let retryAfterSeconds: Int?

    /// An error with the code's status (``APIErrorCode/status``).
    init(_ code: APIErrorCode, _ message: String, retryAfterSeconds: Int? = nil) {
        self.init(code.status, code, message, retryAfterSeconds: retryAfterSeconds)
    }

    /// An error whose status is spelled out as well; it must be the code's, which the table holds.
    init(_ status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String, retryAfterSeconds: Int? = nil) {
        assert(status == code.status, "\(code) is answered with \(code.status.code), not \(status.code)")
        self.status = status
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// An error whose status may differ from the code's: Hummingbird's own 4xx (e.g. 408, 431) as
    /// `malformedInput`.
    init(status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
        retryAfterSeconds = nil
    }

    var description: String { "\(status.code) \(code): \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(.malformedInput, message) }
    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, message) }
    static func conflict(_ message: String) -> APIError { APIError(.conflict, message) }
    static let internalError = APIError(.internalError, "internal server error")

    /// A `ShareRecoveryError` raised while checking client input: the client's fault, so a 4xx with the
    /// same code and its status in the table (404 for `noMatchingShare`, 409 for `nonceReused`, 400
    /// for a code the table does not list).
    static func clientInput(_ error: ShareRecoveryError) -> APIError {
        APIError(APIErrorCode(error.code), error.reason)
    }
}

/// Runs a check of client input; a `ShareRecoveryError` it throws becomes a 4xx ``APIError``.
func checkingClientInput<R>(_ body: () throws -> R) throws(APIError) -> R {
    do {
        return try body()
    } catch let error as ShareRecoveryError {
        throw APIError.clientInput(error)
    } catch let error as APIError {
        throw error
    } catch {
        throw APIError.badRequest("invalid input")
    }
}
