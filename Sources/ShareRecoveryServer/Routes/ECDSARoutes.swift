import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// ECDSA with the custodian as the second signer (docs/formats.md §12, docs/ecdsa.md): a device's
/// pair setup, then signatures of three rounds over it. Every call needs a token of purpose `sign`
/// for the user; messages travel as canonical base64.
extension ServerRoutes {
    var ecdsaSessions: ECDSASessions { ECDSASessions(state: state) }

    /// Mounted at `/wallets/ecdsa`.
    var ecdsaRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post("pair-setups") { request, context in try await openPairSetup(request, context) }
        routes.post("pair-setups/:sessionId/finish") { request, context in try await finishPairSetup(request, context) }
        routes.post("signing-sessions") { request, context in try await openECDSASigning(request, context) }
        routes.post("signing-sessions/:sessionId/round2") { request, context in
            try await ecdsaRound(request, context, round: 2)
        }
        routes.post("signing-sessions/:sessionId/round3") { request, context in
            try await ecdsaRound(request, context, round: 3)
        }
        routes.post("signing-sessions/:sessionId/abort") { request, context in try await abortECDSA(request, context) }
        return routes
    }

    /// `POST /wallets/ecdsa/pair-setups` `{"clientId", "walletId", "setId", "generation", "round1"}`
    /// → 201 with the custodian's `round1` and `round2`.
    func openPairSetup(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "walletId", "setId", "generation", "round1"])
        let clientId = try body.identifier("clientId")
        _ = try await token(request, userId: clientId, purposes: [.sign])
        let answer = try await ecdsaSessions.openPairSetup(
            clientId: clientId, binding: try Self.ecdsaBinding(body), deviceRound1: try Self.message(body, "round1"))
        return JSONResponse.json(answer, status: .created)
    }

    /// `POST /wallets/ecdsa/pair-setups/{id}/finish` `{"round2"}` → 200 `{"setId", "generation"}`.
    func finishPairSetup(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedProtocolSession(request, context, .ecdsaPairSetup)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["round2"])
        return JSONResponse.json(
            try await ecdsaSessions.finishPairSetup(
                session, deviceRound2: try Self.message(body, "round2"), origin: origin(context)))
    }

    /// `POST /wallets/ecdsa/signing-sessions`
    /// `{"clientId", "walletId", "setId", "generation", "digest", "path"?, "round1"}` → 201 with the
    /// custodian's `round1`; 409 `pairSetupStale` without a setup of the set and generation.
    func openECDSASigning(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(
            required: ["clientId", "walletId", "setId", "generation", "digest", "round1"], optional: ["path"])
        let clientId = try body.identifier("clientId")
        _ = try await token(request, userId: clientId, purposes: [.sign])
        guard let digest = Hex.decode(try body.string("digest")), digest.count == 32 else {
            throw APIError.badRequest("digest must be 64 lowercase hex digits (32 bytes)")
        }
        let pathText = try body.optionalString("path")
        let path = try checkingClientInput { () throws(ShareRecoveryError) -> DerivationPath in
            try pathText.map { (text) throws(ShareRecoveryError) in try DerivationPath(text) } ?? .root
        }
        let answer = try await ecdsaSessions.openSigning(
            clientId: clientId, binding: try Self.ecdsaBinding(body), digest: digest, path: path,
            deviceRound1: try Self.message(body, "round1"))
        return JSONResponse.json(answer, status: .created)
    }

    /// `POST /wallets/ecdsa/signing-sessions/{id}/round2` `{"round2"}` → 200 `{"round2"}`, and
    /// `…/round3` `{"round3"}` → 200 `{"round3", "signature"}`; 409 `nonceReused` for a round state
    /// already used, 400 `ecdsaCheckFailed` when the device's messages fail a check (the setup is
    /// discarded).
    func ecdsaRound(_ request: Request, _ context: ServerRequestContext, round: Int) async throws -> Response {
        let session = try await authorisedProtocolSession(request, context, .ecdsaSigning)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        let member = "round\(round)"
        try body.expect(required: [member])
        let message = try Self.message(body, member)
        return JSONResponse.json(
            round == 2
                ? try await ecdsaSessions.round2(session, deviceRound2: message, origin: origin(context))
                : try await ecdsaSessions.round3(session, deviceRound3: message, origin: origin(context)))
    }

    /// `POST /wallets/ecdsa/signing-sessions/{id}/abort` `{"check"}` → 204: a check of the device's
    /// failed on the custodian's messages of round `check`; the set's pair setup is discarded.
    func abortECDSA(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedProtocolSession(request, context, .ecdsaSigning)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["check"])
        guard let check = ECDSASessions.Check(rawValue: try body.string("check")) else {
            throw APIError.badRequest("check must be round1, round2 or round3")
        }
        try await ecdsaSessions.abort(session, check: check, origin: origin(context))
        return JSONResponse.noContent()
    }

    /// The set a request names: `walletId`, `setId` and the `generation` of the device's share.
    private static func ecdsaBinding(_ body: JSONObject) throws -> ECDSASessions.Binding {
        let setId = try body.string("setId")
        guard setId.utf8.count == 32, Hex.decode(setId) != nil else {
            throw APIError.badRequest("setId must be 32 lowercase hex digits")
        }
        guard case .number(let text)? = body.member("generation"), let generation = UInt32(text),
            String(generation) == text
        else { throw APIError.badRequest("generation must be an integer 0…4294967295") }
        return ECDSASessions.Binding(walletId: try body.identifier("walletId"), setId: setId, generation: generation)
    }

    /// A protocol message: canonical base64.
    private static func message(_ body: JSONObject, _ key: String) throws -> [UInt8] {
        guard let bytes = Base64.decode(try body.string(key)) else {
            throw APIError.badRequest("\(key) must be canonical base64")
        }
        return bytes
    }
}
