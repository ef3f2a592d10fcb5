import Hummingbird
import ShareRecovery

/// The integrator's view of the audit trail: one account's events, page by page.
extension ServerRoutes {
    /// Events per page unless `limit` says otherwise, and the most a page holds.
    static let auditPageDefault = 50
    static let auditPageMaximum = 200

    /// Mounted at `/users`, beside the integrator routes.
    var auditRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.get(":userId/audit-events") { request, context in try await auditEvents(request, context) }
        return routes
    }

    /// `GET /users/{userId}/audit-events?after=<cursor>&limit=<n>` (X-Webhook-Secret) → 200
    /// `{"events": [...], "nextCursor"?}`: the account's events, oldest first. The webhook secret, not a
    /// user token: the trail is the operator's record of what was done with an account, and a user
    /// token is what someone who took over the OTP channel holds (docs/server.md, "Audit trail").
    func auditEvents(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try requireWebhookSecret(request)
        let userId = try RequestReading.pathParameter(context, "userId")
        let after = try Self.auditCursor(request)
        let limit = try Self.auditLimit(request)
        try await RequestReading.emptyBody(request, limit: self.limit)
        // One row more than the page tells whether another page follows.
        return JSONResponse.json(
            try await AuditTrail.page(state.storage, account: userId, after: after, limit: limit))
    }

    /// The `after` query value (absent: from the start).
    static func auditCursor(_ request: Request) throws(APIError) -> Int64 {
        let values = request.uri.queryParameters.getAll("after")
        guard !values.isEmpty else { return 0 }
        guard values.count == 1, values[0].utf8.count == 16,
            values[0].utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let sequence = Int64(values[0], radix: 16)
        else { throw APIError.badRequest("after must be a nextCursor value from an earlier page") }
        return sequence
    }

    /// The `limit` query value: 1…200, default 50.
    static func auditLimit(_ request: Request) throws(APIError) -> Int {
        let values = request.uri.queryParameters.getAll("limit")
        guard !values.isEmpty else { return auditPageDefault }
        guard values.count == 1, let limit = Int(values[0]), String(limit) == values[0],
            (1...auditPageMaximum).contains(limit)
        else { throw APIError.badRequest("limit must be an integer from 1 to \(auditPageMaximum)") }
        return limit
    }

}
