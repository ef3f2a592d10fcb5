public import HTTPTypes
public import ShareRecovery
import ShareRecoveryHTTP

/// The `code` of an API error body (`{"error": {"code", "message"}}`): the server's own refusals,
/// or the name of the engine check that failed on client input. Clients read it back by name, so a
/// name never changes; docs/server.md and docs/openapi.yaml list them.
public struct APIErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The code as it appears on the wire.
    public let name: String

    private init(name: String) { self.name = name }

    /// The engine's code of the same name: a format, resharing, DKG or signing check that failed on
    /// what the client sent (e.g. `malformedCipherText`, `dealerCheckFailed`), or the engine's
    /// `notFound`, `malformedInput` and `conflict`.
    public init(_ engine: ShareRecoveryError.Code) { name = engine.description }

    /// A body that is not the JSON the route takes (HTTP 400).
    public static let malformedInput = APIErrorCode(ShareRecoveryError.Code.malformedInput)
    /// No such resource or route (HTTP 404).
    public static let notFound = APIErrorCode(ShareRecoveryError.Code.notFound)
    /// A request that does not fit the resource's current state (HTTP 409).
    public static let conflict = APIErrorCode(ShareRecoveryError.Code.conflict)
    /// No, malformed, expired, forged or spent bearer token, or a wrong webhook secret (HTTP 401).
    public static let unauthorized = APIErrorCode(name: "unauthorized")
    /// Valid credentials that do not cover the request: another user or purpose (HTTP 403).
    public static let forbidden = APIErrorCode(name: "forbidden")
    /// A one-time code that does not match its flow; the flow ends after five (HTTP 401).
    public static let wrongCode = APIErrorCode(name: "wrongCode")
    /// A flow that expired, was used, or ended after too many wrong codes (HTTP 410).
    public static let flowEnded = APIErrorCode(name: "flowEnded")
    /// Too many attempts for an identifier or client address (HTTP 429).
    public static let rateLimited = APIErrorCode(name: "rateLimited")
    /// A method that no route of the path takes; `Allow` names those that do (HTTP 405).
    public static let methodNotAllowed = APIErrorCode(name: "methodNotAllowed")
    /// A request body over the size limit (HTTP 413).
    public static let payloadTooLarge = APIErrorCode(name: "payloadTooLarge")
    /// An `Idempotency-Key` already used for another request (another method, path or body) (HTTP 422).
    public static let idempotencyKeyReused = APIErrorCode(name: "idempotencyKeyReused")
    /// The first request with this `Idempotency-Key` is still being applied: retry shortly (HTTP 409).
    public static let requestInProgress = APIErrorCode(name: "requestInProgress")
    /// A service the server depends on failed: the OTP gateway or the integrator's webhook (HTTP 502).
    public static let sourceFailure = APIErrorCode(name: "sourceFailure")
    /// A failure on the server's side; the message is generic and details go to the log (HTTP 500).
    public static let internalError = APIErrorCode(name: "internalError")

    /// A device beyond the server's limit of devices per wallet: remove one first (HTTP 409).
    public static let deviceLimitReached = APIErrorCode(name: "deviceLimitReached")

    /// The wallet's signing set is older than the server's refresh policy allows: refresh the shares
    /// (`share-recovery refresh --server`), then sign (HTTP 409).
    public static let refreshRequired = APIErrorCode(name: "refreshRequired")

    /// `GET /ready` only: the database cannot be reached, or lacks a migration (HTTP 503).
    public static let notReady = APIErrorCode(name: "notReady")

    /// The server's own codes, beside the engine's (for documentation and tests).
    public static let serverCodes: [APIErrorCode] = [
        .unauthorized, .forbidden, .wrongCode, .flowEnded, .rateLimited, .methodNotAllowed, .payloadTooLarge,
        .idempotencyKeyReused, .requestInProgress, .sourceFailure, .internalError, .notReady, .deviceLimitReached,
        .refreshRequired,
    ]

    /// The HTTP status the code is answered with, from the one table of codes (`APIErrorTable`); an
    /// engine code the table does not list is a refusal of the input (400).
    public var status: HTTPResponse.Status {
        APIErrorTable.byCode[name].map { HTTPResponse.Status(code: $0.status) } ?? .badRequest
    }

    public var description: String { name }
}
