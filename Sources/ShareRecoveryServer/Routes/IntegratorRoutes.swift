import Hummingbird
import ShareRecovery
import ShareRecoveryHTTP

/// Integrator backup API: cipherTexts per user and method.
extension ServerRoutes {
    /// Mounted at `/users`.
    var integratorRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.put(":userId/user-backup-share") { request, context in try await putCipherText(request, context) }
        routes.get(":userId/user-backup-share") { request, context in try await getCipherText(request, context) }
        routes.delete(":userId/user-backup-share") { request, context in try await deleteCipherText(request, context) }
        routes.get(":userId/recovery-methods") { request, context in try await recoveryMethods(request, context) }
        return routes
    }

    /// `PUT /users/{userId}/user-backup-share?backupMethod=M` — single use of an `addOrUpdateRecovery` token.
    func putCipherText(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let userId = try RequestReading.pathParameter(context, "userId")
        let method = try RequestReading.backupMethodQuery(request)
        let token = try await token(request, userId: userId, purposes: [.addOrUpdateRecovery])
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["cipherText"])
        let text = try body.string("cipherText")
        let cipherText = try checkingClientInput { try CipherText(base64: text) }
        guard cipherText.method == method else {
            throw APIError(
                .badRequest, APIErrorCode(.unsupportedMethod),
                "the cipherText is a \(cipherText.method.apiName) backup, not \(method.apiName)")
        }
        switch try await state.storage.putCipherText(
            cipherText.base64, userId: userId, method: method, token: token, origin: origin(context))
        {
        case .done: return JSONResponse.noContent()
        case .tokenSpent, .notFound: throw APIError.unauthorized("the token was already used")
        }
    }

    /// `GET /users/{userId}/user-backup-share?backupMethod=M` — a `recover` token.
    func getCipherText(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let userId = try RequestReading.pathParameter(context, "userId")
        let method = try RequestReading.backupMethodQuery(request)
        _ = try await token(request, userId: userId, purposes: [.recover])
        try await RequestReading.emptyBody(request, limit: limit)
        guard let text = try await state.storage.readCipherText(userId: userId, method: method, origin: origin(context))
        else {
            throw APIError.notFound("no cipherText for this user and method")
        }
        return JSONResponse.json(.object([("cipherText", .string(text))]))
    }

    /// `DELETE /users/{userId}/user-backup-share?backupMethod=M` — single use of a `deleteRecovery` token.
    func deleteCipherText(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let userId = try RequestReading.pathParameter(context, "userId")
        let method = try RequestReading.backupMethodQuery(request)
        let token = try await token(request, userId: userId, purposes: [.deleteRecovery])
        try await RequestReading.emptyBody(request, limit: limit)
        switch try await state.storage.deleteCipherText(
            userId: userId, method: method, token: token, origin: origin(context))
        {
        case .done: return JSONResponse.noContent()
        case .notFound: throw APIError.notFound("no cipherText for this user and method")
        case .tokenSpent: throw APIError.unauthorized("the token was already used")
        }
    }

    /// `GET /users/{userId}/recovery-methods` — a token of any purpose.
    func recoveryMethods(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let userId = try RequestReading.pathParameter(context, "userId")
        _ = try await token(request, userId: userId, purposes: nil)
        try await RequestReading.emptyBody(request, limit: limit)
        let methods = try await state.storage.storedMethods(userId: userId)
        return JSONResponse.json(.object([("methods", .array(methods.map { .string($0.apiName) }))]))
    }
}
