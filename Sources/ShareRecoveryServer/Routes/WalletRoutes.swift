import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// The wallet's birth and signatures with the custodian as party 2 (docs/formats.md §10–§11). Every call
/// needs a token of purpose `sign` for the user.
extension ServerRoutes {
    var walletSessions: WalletSessions { WalletSessions(state: state) }

    /// Mounted at `/wallets`.
    var walletRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post("dkg") { request, context in try await openDKG(request, context) }
        routes.post("dkg/:sessionId/finish") { request, context in try await finishDKG(request, context) }
        routes.post("signing-sessions") { request, context in try await openSigning(request, context) }
        routes.post("signing-sessions/:sessionId/sign") { request, context in try await sign(request, context) }
        routes.post("eject") { request, context in try await eject(request, context) }
        return routes
    }

    /// `POST /wallets/dkg` → 201 with the custodian's broadcast and its sealed sub-share for the device.
    func openDKG(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await verifiedToken(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "walletId", "curve", "threshold", "parties", "round1", "clientKey"])
        let clientId = try body.identifier("clientId")
        guard token.userId == clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == .sign else {
            throw APIError.forbidden(
                "creating a wallet needs a token of purpose sign; this one is for \(token.purpose.rawValue)")
        }
        guard let curve = Curve(name: try body.string("curve")) else {
            throw APIError(.badRequest, APIErrorCode(.invalidParameters), "curve must be secp256k1 or ed25519")
        }
        let parameters = try checkingClientInput {
            try DKGParameters(
                curve: curve, walletId: try body.identifier("walletId"),
                threshold: try Self.smallInteger(body, "threshold"),
                parties: try Self.smallInteger(body, "parties"))
        }
        guard let clientKey = Hex.decode(try body.string("clientKey")), clientKey.count == 32 else {
            throw APIError.badRequest("clientKey must be 64 lowercase hex digits")
        }
        guard let round1 = body.member("round1") else { throw APIError.badRequest("missing round1") }
        let answer = try await walletSessions.openDKG(
            clientId: clientId, parameters: parameters, deviceRound1: round1, clientKey: clientKey)
        return JSONResponse.json(answer, status: .created)
    }

    /// `POST /wallets/dkg/{id}/finish` `{"sealedSubShare"}` → 200 with the wallet's public key.
    func finishDKG(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedProtocolSession(request, context, .dkg)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["sealedSubShare"])
        guard let sealed = Base64.decode(try body.string("sealedSubShare")) else {
            throw APIError.badRequest("sealedSubShare must be canonical base64")
        }
        return JSONResponse.json(
            try await walletSessions.finishDKG(session, sealedSubShare: sealed, origin: origin(context)))
    }

    /// `POST /wallets/signing-sessions` `{"clientId", "walletId", "mode", "setId", "path"?, "taproot"?}`
    /// → 201 with the custodian's nonce commitment. `path` and `taproot` sign for a child key and/or its
    /// Taproot output key (mode bip340 on secp256k1; docs/derivation.md).
    func openSigning(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "walletId", "mode", "setId"], optional: ["path", "taproot"])
        let clientId = try body.identifier("clientId")
        _ = try await token(request, userId: clientId, purposes: [.sign])
        guard let mode = SigningMode(rawValue: try body.string("mode")) else {
            throw APIError(.badRequest, APIErrorCode(.invalidParameters), "mode must be bip340 or rfc9591")
        }
        let setId = try body.string("setId")
        guard setId.utf8.count == 32, Hex.decode(setId) != nil else {
            throw APIError.badRequest("setId must be 32 lowercase hex digits")
        }
        let taproot: Bool
        switch body.member("taproot") {
        case nil: taproot = false
        case .bool(let value)?: taproot = value
        default: throw APIError.badRequest("taproot must be true or false")
        }
        let pathText = try body.optionalString("path")
        let tweaks = try checkingClientInput { () throws(ShareRecoveryError) -> SigningTweaks in
            SigningTweaks(
                path: try pathText.map { (text) throws(ShareRecoveryError) in try DerivationPath(text) } ?? .root,
                taproot: taproot)
        }
        let answer = try await walletSessions.openSigning(
            clientId: clientId, walletId: try body.identifier("walletId"), mode: mode, deviceSetId: setId,
            tweaks: tweaks)
        return JSONResponse.json(answer, status: .created)
    }

    /// `POST /wallets/signing-sessions/{id}/sign` `{"message", "commitment"}` → 200 with the custodian's
    /// signature share; 409 `nonceReused` for a session that already signed.
    func sign(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedProtocolSession(request, context, .signing)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["message", "commitment"])
        guard let message = Base64.decode(try body.string("message")) else {
            throw APIError.badRequest("message must be canonical base64")
        }
        guard let commitment = body.member("commitment") else { throw APIError.badRequest("missing commitment") }
        return JSONResponse.json(
            try await walletSessions.sign(
                session, message: message, deviceCommitment: commitment, origin: origin(context)))
    }

    /// The protocol session named in the path, for a `sign` token of its user (401 before 404 before 403).
    func authorisedProtocolSession(
        _ request: Request, _ context: ServerRequestContext, _ kind: ProtocolSessionRecord.Kind
    ) async throws -> ProtocolSessionRecord {
        let token = try await verifiedToken(request)
        let id = try RequestReading.issuedIdentifier(context, "sessionId", what: "session")
        guard let session = try await state.storage.protocolSession(id: id, kind: kind, now: state.now()) else {
            throw APIError.notFound("no such session")
        }
        guard token.userId == session.clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == .sign else {
            throw APIError.forbidden(
                "a wallet session needs a token of purpose sign; this one is for \(token.purpose.rawValue)")
        }
        return session
    }

    /// A JSON integer 0…255 (t and n).
    private static func smallInteger(_ body: JSONObject, _ key: String) throws -> Int {
        guard case .number(let text)? = body.member(key), let value = Int(text), String(value) == text,
            (0...255).contains(value)
        else {
            throw ShareRecoveryError(.invalidParameters, "\"\(key)\" must be an integer 0…255")
        }
        return value
    }
}
