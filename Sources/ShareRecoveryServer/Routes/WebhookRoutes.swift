import Hummingbird
import ShareRecovery

/// Custodian webhooks: the integrator's store of custodian backup shares (docs/formats.md §6).
extension ServerRoutes {
    /// Mounted at `/webhook`.
    var webhookRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post("backup") { request, context in try await deliverBackupShare(request, context) }
        routes.post("backup/fetch") { request, context in try await fetchBackupShares(request, context) }
        routes.post("backup/delete") { request, context in try await deleteBackupShares(request, context) }
        return routes
    }

    /// `POST /webhook/backup` `{"clientId", "backupShare"}` → 204.
    func deliverBackupShare(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try requireWebhookSecret(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "backupShare"])
        let clientId = try body.identifier("clientId")
        let json = try body.string("backupShare")
        let share = try checkingClientInput { try CustodianBackupShare(json: json) }
        try await state.storage.deliverBackupShare(share, json: json, clientId: clientId, origin: origin(context))
        return JSONResponse.noContent()
    }

    /// `POST /webhook/backup/fetch` `{"clientId"}` → 200 `{"backupShares": [...]}`.
    func fetchBackupShares(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try requireWebhookSecret(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId"])
        let clientId = try body.identifier("clientId")
        let shares = try await state.storage.serveBackupShares(clientId: clientId, origin: origin(context))
        return JSONResponse.json(.object([("backupShares", .array(shares.map { .string($0) }))]))
    }

    /// `POST /webhook/backup/delete` `{"clientId", "backupMethod"}` → 204.
    func deleteBackupShares(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try requireWebhookSecret(request)
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "backupMethod"])
        let clientId = try body.identifier("clientId")
        let name = try body.string("backupMethod")
        guard let method = BackupMethod(apiName: name) else {
            throw APIError(.badRequest, APIErrorCode(.unsupportedMethod), "unknown backupMethod")
        }
        try await state.storage.deleteBackupShares(clientId: clientId, method: method, origin: origin(context))
        return JSONResponse.noContent()
    }
}
