import HTTPTypes
import Hummingbird
import ShareCrypto
import ShareRecovery

/// The routes of `/tmp`'s API contract (docs/openapi.yaml), over one ``ServerState``.
struct ServerRoutes: Sendable {
    let state: ServerState
    var limit: Int { state.configuration.maximumBodySize }
    var sessions: CustodianSessions { CustodianSessions(state: state) }

    func register(on router: Router<ServerRequestContext>) {
        router.get("/health") { _, _ in JSONResponse.json(.object([("status", .string("ok"))])) }

        router.put("/users/:userId/user-backup-share") { request, context in try await putCipherText(request, context) }
        router.get("/users/:userId/user-backup-share") { request, context in try await getCipherText(request, context) }
        router.delete("/users/:userId/user-backup-share") { request, context in
            try await deleteCipherText(request, context)
        }
        router.get("/users/:userId/recovery-methods") { request, context in try await recoveryMethods(request, context)
        }

        router.post("/webhook/backup") { request, context in try await deliverBackupShare(request, context) }
        router.post("/webhook/backup/fetch") { request, context in try await fetchBackupShares(request, context) }
        router.post("/webhook/backup/delete") { request, context in try await deleteBackupShares(request, context) }

        router.post("/recovery/flows") { request, context in try await createFlow(request, context) }
        router.post("/recovery/flows/:flowId/verify") { request, context in try await verifyFlow(request, context) }

        router.get("/custodian/key") { _, _ in
            JSONResponse.json(.object([("publicKey", .string(Hex.encode(state.custodianKey.publicKey)))]))
        }
        router.post("/custodian/wallets") { request, context in try await registerWallet(request, context) }
        router.post("/recovery/sessions") { request, context in try await openSession(request, context) }
        router.post("/recovery/sessions/:sessionId/finish") { request, context in
            try await finishSession(request, context)
        }
        router.post("/recovery/sessions/:sessionId/confirm") { request, context in
            try await confirmSession(request, context)
        }
        router.delete("/recovery/sessions/:sessionId") { request, context in try await abortSession(request, context) }
    }

    // MARK: Credentials

    /// The bearer token, verified, for `userId` and one of `purposes` (any purpose when `nil`).
    /// - Throws: 401 for a missing, malformed, forged or expired token; 403 for another user or purpose.
    func token(_ request: Request, userId: String?, purposes: [TokenPurpose]?) throws(APIError) -> Token {
        let token = try verifiedToken(request)
        if let userId, token.userId != userId { throw APIError.forbidden("the token is for another user") }
        if let purposes, !purposes.contains(token.purpose) {
            throw APIError.forbidden("a \(token.purpose.rawValue) token does not allow this request")
        }
        return token
    }

    /// The bearer token, verified but not yet matched to a resource.
    func verifiedToken(_ request: Request) throws(APIError) -> Token {
        let values = request.headers[values: .authorization]
        guard values.count == 1 else { throw APIError.unauthorized("a bearer token is required") }
        let header = values[0]
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw APIError.unauthorized("a bearer token is required")
        }
        return try state.tokens.verify(String(header.dropFirst(7)).trimmingSpaces, now: state.now)
    }

    /// Checks `X-Webhook-Secret` in constant time.
    func requireWebhookSecret(_ request: Request) throws(APIError) {
        let values = request.headers[values: HTTPField.Name("X-Webhook-Secret")!]
        guard values.count == 1 else { throw APIError.unauthorized("the webhook secret is missing or wrong") }
        // SecureBytes == is constant time.
        guard SecureBytes(copying: Array(values[0].utf8)) == state.webhookSecret else {
            throw APIError.unauthorized("the webhook secret is missing or wrong")
        }
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        // On UTF-8 bytes: a Character-wise trim (reversed twice) was 78 % of a cipherText GET.
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { $0 != UInt8(ascii: " ") }),
            let last = bytes.lastIndex(where: { $0 != UInt8(ascii: " ") })
        else { return "" }
        return String(self[first...last])
    }
}
