import HTTPTypes
import ShareRecovery

/// An error a route answers with: HTTP status, a stable ``APIErrorCode`` (clients map it back by
/// name), and a message that never carries secret bytes. Only this type reaches clients
/// as a 4xx; anything else thrown by a route becomes a generic 500.
struct APIError: Error, Sendable, CustomStringConvertible {
    let status: HTTPResponse.Status
    let code: APIErrorCode
    let message: String

    init(_ status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var description: String { "\(status.code) \(code): \(message)" }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, .malformedInput, message) }
    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, .unauthorized, message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, .forbidden, message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, .notFound, message) }
    static func conflict(_ message: String) -> APIError { APIError(.conflict, .conflict, message) }
    static let internalError = APIError(.internalServerError, .internalError, "internal server error")

    /// A `ShareRecoveryError` raised while checking client input: the client's fault, so a 4xx with the
    /// same code (404 for `notFound`/`noMatchingShare`, 409 for `inconsistentShares`, `nonceReused` and
    /// `conflict`, 400 otherwise).
    static func clientInput(_ error: ShareRecoveryError) -> APIError {
        let status: HTTPResponse.Status =
            switch error.code {
            case .notFound, .noMatchingShare: .notFound
            case .inconsistentShares, .nonceReused, .conflict: .conflict
            default: .badRequest
            }
        return APIError(status, APIErrorCode(error.code), error.reason)
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
