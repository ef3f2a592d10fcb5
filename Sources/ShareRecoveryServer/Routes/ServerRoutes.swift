import HTTPTypes
import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// The routes of `/tmp`'s API contract (docs/openapi.yaml), over one ``ServerState``.
struct ServerRoutes: Sendable {
    let state: ServerState
    var limit: Int { state.configuration.maximumBodySize }
    var sessions: CustodianSessions { CustodianSessions(state: state) }

    /// Mounts every feature's routes; each feature file declares its own (docs/openapi.yaml has them all).
    func register(on router: Router<ServerRequestContext>) {
        // Before the routes: it applies to routes added after it.
        router.add(middleware: StorageRefusalMiddleware())
        registerOperations(on: router)
        router.addRoutes(integratorRoutes, atPath: "/users")
        router.addRoutes(auditRoutes, atPath: "/users")
        router.addRoutes(webhookRoutes, atPath: "/webhook")
        router.addRoutes(flowRoutes, atPath: "/recovery/flows")
        router.addRoutes(sessionRoutes, atPath: "/recovery/sessions")
        router.addRoutes(custodianRoutes, atPath: "/custodian")
        router.addRoutes(walletRoutes, atPath: "/wallets")
        router.addRoutes(ecdsaRoutes, atPath: "/wallets/ecdsa")
        router.addRoutes(deviceRoutes, atPath: "/wallets")
    }

    /// The request and time the audit rows of a request carry.
    func origin(_ context: ServerRequestContext) async throws -> AuditOrigin {
        AuditOrigin(requestId: context.requestId, at: try await state.now())
    }

    /// The client's address, which the per-address limits count against: the TCP peer, or, from a
    /// trusted proxy, the hop its header names (TrustedProxies.swift).
    func clientAddress(_ request: Request, _ context: ServerRequestContext) -> String {
        state.configuration.trustedProxies.clientAddress(peer: context.remoteAddress, headers: request.headers)
    }

    // MARK: Credentials

    /// The bearer token, verified, for `userId` and one of `purposes` (any purpose when `nil`).
    /// - Throws: 401 for a missing, malformed, forged or expired token; 403 for another user or purpose.
    func token(_ request: Request, userId: String?, purposes: [TokenPurpose]?) async throws -> Token {
        let token = try await verifiedToken(request)
        if let userId, token.userId != userId { throw APIError.forbidden("the token is for another user") }
        if let purposes, !purposes.contains(token.purpose) {
            throw APIError.forbidden("a \(token.purpose.rawValue) token does not allow this request")
        }
        return token
    }

    /// The bearer token, verified but not yet matched to a resource.
    func verifiedToken(_ request: Request) async throws -> Token {
        guard let credential = Self.bearerCredential(request) else {
            throw APIError.unauthorized("a bearer token is required")
        }
        return try state.tokens.verify(credential.trimmingSpaces, now: try await state.now())
    }

    /// What follows `Bearer ` in the request's one `Authorization` header, or `nil` when there is not
    /// exactly one such header (user tokens and the metrics token alike).
    static func bearerCredential(_ request: Request) -> String? {
        let values = request.headers[values: .authorization]
        // On UTF-8 bytes, as the token's own checks: counting Characters walks the whole token.
        guard values.count == 1 else { return nil }
        let bytes = values[0].utf8
        guard bytes.count > 7, String(decoding: bytes.prefix(7), as: UTF8.self).lowercased() == "bearer " else {
            return nil
        }
        return String(decoding: bytes.dropFirst(7), as: UTF8.self)
    }

    /// Checks `X-Webhook-Secret` in constant time.
    func requireWebhookSecret(_ request: Request) throws(APIError) {
        let values = request.headers[values: HTTPField.Name("X-Webhook-Secret")!]
        guard values.count == 1 else { throw APIError.unauthorized("the webhook secret is missing or wrong") }
        // Constant time (SecretRing.accepts).
        guard state.webhookSecret.accepts(SecureBytes(copying: Array(values[0].utf8))) else {
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
