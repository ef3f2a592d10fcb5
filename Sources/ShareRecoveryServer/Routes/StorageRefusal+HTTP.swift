import HTTPTypes
import Hummingbird
import ShareRecovery

/// The HTTP answer to each ``StorageRefusal``: the one place that gives a storage refusal its status,
/// stable code and message.
extension APIError {
    /// The answer to a refusal of the store.
    init(_ refusal: StorageRefusal) {
        switch refusal {
        case .operationInProgress(let seconds):
            // The role's rule and words (ResharingCustodian), the same as a keeper in process gives.
            let refusal = ResharingCustodian.runningOperation(secondsLeft: [seconds])
            self.init(.conflict, APIErrorCode(.operationInProgress), refusal?.reason ?? "")
        case .ecdsaSessionInProgress(let seconds):
            self.init(
                .conflict, APIErrorCode(.operationInProgress),
                "an ECDSA pair setup or signing session of this account is running (another device or attempt); retry when it has ended, at the latest in \(seconds) s when its session expires"
            )
        case .sessionIdTaken: self = .conflict("a session with this id exists already")
        case .sessionNotFinished: self = .conflict("the session is not finished")
        case .sessionChangedDuringConfirm: self = .conflict("the session changed while it was being confirmed")
        case .walletExists: self = .conflict("this user already has a wallet; a DKG does not replace it")
        case .signingSetChanged:
            self = .conflict("the custodian's signing set changed since this signing session opened")
        case .approvingSetNotCurrent(let setId):
            self = .conflict("the approving device's set \(setId) no longer signs for this wallet")
        case .deviceIdTaken(let deviceId):
            self = .conflict("the wallet already has a device \(deviceId); choose another device id")
        case .deviceLimitReached(let devices):
            self.init(
                .conflict, .deviceLimitReached,
                "the wallet has \(devices) devices, the server's limit: remove one (`device remove`) before adding another"
            )
        case .tokenSpent: self = .unauthorized("the token was already used")
        case .idempotencyKeyTaken:
            self.init(
                .conflict, .requestInProgress,
                "a request with this Idempotency-Key is still being applied; retry shortly")
        }
    }

    /// The answer a route's error gets: an ``APIError`` as it is, a ``StorageRefusal`` mapped, else `nil`
    /// (an internal failure).
    static func answering(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError: error
        case let refusal as StorageRefusal: APIError(refusal)
        default: nil
        }
    }
}

/// Turns a storage refusal a route let through into its ``APIError``. Mounted inside the idempotency
/// middleware (by ``ServerRoutes/register(on:)``), so that the answer a key keeps is the mapped one.
struct StorageRefusalMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let refusal as StorageRefusal {
            throw APIError(refusal)
        }
    }
}
