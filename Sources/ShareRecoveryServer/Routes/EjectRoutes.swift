import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Eject (docs/eject.md), mounted beside the wallet routes.
extension ServerRoutes {
    /// `POST /wallets/eject` `{"clientId", "walletId", "setId", "clientKey"}` with a token of purpose `eject`
    /// → 200 with the custodian's signing share sealed to `clientKey`; the wallet is ejected.
    func eject(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "walletId", "setId", "clientKey"])
        let clientId = try body.identifier("clientId")
        let token = try await verifiedToken(request)
        guard token.userId == clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == .eject else {
            throw APIError.forbidden(
                "eject needs a token of purpose eject from its own flow; this one is for \(token.purpose.rawValue)")
        }
        let setId = try body.string("setId")
        guard setId.utf8.count == 32, Hex.decode(setId) != nil else {
            throw APIError.badRequest("setId must be 32 lowercase hex digits")
        }
        guard let clientKey = Hex.decode(try body.string("clientKey")), clientKey.count == 32 else {
            throw APIError.badRequest("clientKey must be 64 lowercase hex digits")
        }
        return JSONResponse.json(
            try await walletSessions.eject(
                clientId: clientId, walletId: try body.identifier("walletId"), deviceSetId: setId, clientKey: clientKey,
                token: token,
                origin: origin(context)))
    }
}
