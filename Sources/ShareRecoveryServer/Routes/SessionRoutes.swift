import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Custodian resharing sessions (docs/formats.md §3) and the demo wallet registration.
extension ServerRoutes {
    /// Mounted at `/custodian`: the custodian's public key and wallet registration.
    var custodianRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        let publicKey = Hex.encode(state.custodianKey.publicKey)
        routes.get("key") { _, _ in JSONResponse.json(.object([("publicKey", .string(publicKey))])) }
        routes.post("wallets") { request, context in try await registerWallet(request, context) }
        return routes
    }

    /// Mounted at `/recovery/sessions`.
    var sessionRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post { request, context in try await openSession(request, context) }
        routes.post(":sessionId/finish") { request, context in try await finishSession(request, context) }
        routes.post(":sessionId/confirm") { request, context in try await confirmSession(request, context) }
        routes.delete(":sessionId") { request, context in try await abortSession(request, context) }
        return routes
    }

    /// `POST /custodian/wallets` `{"clientId", "sealedShare"}` → 204 (webhook secret): registers one of the
    /// custodian's signing shares after a client-side key generation.
    func registerWallet(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try requireWebhookSecret(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "sealedShare"])
        let clientId = try body.identifier("clientId")
        guard let sealed = Base64.decode(try body.string("sealedShare")) else {
            throw APIError.badRequest("sealedShare must be canonical base64")
        }
        let record = try checkingClientInput { () throws -> ShareRecord in
            let binary: SecureBytes
            do {
                binary = try SealedBox.open(sealed, with: state.custodianKey)
            } catch {
                throw ShareRecoveryError(.unsealFailed, "sealedShare does not open with the custodian key")
            }
            return try ShareRecord(binary: binary)
        }
        guard record.kind == .signing, record.partyIndex != 1 else {
            throw APIError(
                .badRequest, APIErrorCode(.invalidParameters), "the custodian holds signing shares of parties 2…n only")
        }
        try await state.storage.registerSigningShare(
            clientId: clientId, share: try sessions.sealedSigningShare(record, clientId: clientId),
            now: try await state.now(), origin: origin(context))
        return JSONResponse.noContent()
    }

    /// `POST /recovery/sessions` → 201 with the plan and the custodian's dealings. A refresh (docs/formats.md
    /// §3) names no backupMethod and needs a sign token.
    func openSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await verifiedToken(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(
            required: ["clientId", "purpose", "clientShare", "clientKey"], optional: ["backupMethod", "sessionId"])
        let clientId = try body.identifier("clientId")
        guard let purpose = CustodianSessions.Purpose(rawValue: try body.string("purpose")) else {
            throw APIError.badRequest("purpose must be backup, recovery or refresh")
        }
        guard token.userId == clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == purpose.tokenPurpose else {
            throw APIError.forbidden("a \(purpose.rawValue) session needs a \(purpose.tokenPurpose.rawValue) token")
        }
        var method: BackupMethod?
        switch (purpose.needsMethod, body.member("backupMethod") != nil) {
        case (true, true):
            guard let named = BackupMethod(apiName: try body.string("backupMethod")) else {
                throw APIError(.badRequest, APIErrorCode(.unsupportedMethod), "unknown backupMethod")
            }
            method = named
        case (true, false): throw APIError.badRequest("missing backupMethod")
        case (false, true): throw APIError.badRequest("a refresh names no backupMethod: it reshares the signing set")
        case (false, false): break
        }
        guard let shareValue = body.member("clientShare") else { throw APIError.badRequest("missing clientShare") }
        let clientShare = try checkingClientInput { try ShareRecord(jsonValue: shareValue) }
        guard clientShare.secret == nil else {
            throw APIError.badRequest("clientShare must be a public description, without its secret")
        }
        guard let clientKey = Hex.decode(try body.string("clientKey")), clientKey.count == 32 else {
            throw APIError.badRequest("clientKey must be 64 lowercase hex digits")
        }
        var chosenId: String?
        if body.member("sessionId") != nil {
            let text = try body.string("sessionId")
            guard text.utf8.count == 32,
                text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else { throw APIError.badRequest("sessionId must be 32 lowercase hex digits") }
            chosenId = text
        }
        let offer = try await sessions.open(
            clientId: clientId, purpose: purpose, method: method, clientShare: clientShare, clientKey: clientKey,
            sessionId: chosenId, origin: origin(context))
        return JSONResponse.json(offer, status: .created)
    }

    /// `POST /recovery/sessions/{id}/finish` `{"clientDealing"}` → 200 with the new commitments.
    func finishSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedSession(request, context)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientDealing"])
        guard let dealing = body.member("clientDealing") else { throw APIError.badRequest("missing clientDealing") }
        return JSONResponse.json(try await sessions.finish(session, clientDealing: dealing, origin: origin(context)))
    }

    /// `POST /recovery/sessions/{id}/confirm` → 204: the pending set becomes current. A repeated confirm
    /// answers 204 again, so a client whose answer was lost can retry.
    func confirmSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedSession(request, context)
        try await RequestReading.emptyBody(request, limit: limit)
        try await sessions.confirm(session, origin: origin(context))
        return JSONResponse.noContent()
    }

    /// `DELETE /recovery/sessions/{id}` → 204: abandons the session; nothing else changes. 409 once it is
    /// confirmed: its set is current, and the answer must not say otherwise.
    func abortSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let session = try await authorisedSession(request, context)
        try await RequestReading.emptyBody(request, limit: limit)
        let aborted = try CustodianSessions.event(\.aborted, session, origin: await origin(context))
        switch try await state.storage.deleteSession(id: session.id, aborted: aborted) {
        case .deleted: return JSONResponse.noContent()
        case .notFound: throw APIError.notFound("no such session")
        case .confirmed: throw APIError.conflict("the session is confirmed")
        }
    }

    /// The session named in the path, for a token of its client and purpose (401 before 404 before 403).
    private func authorisedSession(_ request: Request, _ context: ServerRequestContext) async throws
        -> ProtocolSessionRecord
    {
        let token = try await verifiedToken(request)
        let id = try RequestReading.issuedIdentifier(context, "sessionId", what: "session")
        guard let session = try await state.storage.protocolSession(id: id, kind: .resharing, now: state.now()) else {
            throw APIError.notFound("no such session")
        }
        guard token.userId == session.clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == (try CustodianSessions.purpose(session)).tokenPurpose else {
            throw APIError.forbidden("the token's purpose does not match the session")
        }
        return session
    }
}
