import HTTPTypes
import Hummingbird
import Logging
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// OTP recovery flows: a six-digit code goes out through the ``OTPSender``; verifying it issues a token.
extension ServerRoutes {
    /// Mounted at `/recovery/flows`.
    var flowRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post { request, context in try await createFlow(request, context) }
        routes.post(":flowId/verify") { request, context in try await verifyFlow(request, context) }
        return routes
    }

    /// `POST /recovery/flows` `{"identifier", "purpose"?}` → 201 `{"flowId", "expiresAt"}`.
    func createFlow(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["identifier"], optional: ["purpose"])
        let identifier = try body.identifier("identifier")
        let purpose =
            try body.optionalString("purpose").map { (name) throws(APIError) -> TokenPurpose in
                guard let purpose = TokenPurpose(rawValue: name) else {
                    throw APIError.badRequest(
                        "purpose must be one of \(TokenPurpose.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return purpose
            } ?? .recover
        let now = try await state.now()
        let flowId = Hex.encode(SystemRandom().bytes(count: 16))
        let code = Self.randomCode()
        let expiresAt = now + Int64(state.configuration.flowLifetimeSeconds)
        let flow = FlowRecord(
            id: flowId, identifier: identifier, purpose: purpose, codeHash: codeHashes(flowId: flowId, code: code)[0],
            expiresAt: expiresAt)
        guard
            try await state.storage.createFlow(
                flow, address: clientAddress(request, context), limits: state.configuration.rateLimits, now: now)
        else {
            let limits = state.configuration.rateLimits
            throw Self.rateLimited([limits.flowCreationPerIdentifier, limits.flowCreationPerAddress], now: now)
        }
        do {
            try await state.otpSender.send(
                OTPMessage(
                    identifier: identifier, flowId: flowId, purpose: purpose.rawValue,
                    expiresAt: RFC3339.format(expiresAt), code: code))
        } catch {
            state.logger.error("OTP delivery failed", metadata: ["flowId": "\(flowId)", "error": "\(error)"])
            throw APIError(.badGateway, .sourceFailure, "the one-time code could not be delivered")
        }
        // Housekeeping on about one flow creation in sixteen: cheap, and no process has to own it.
        if Int(SystemRandom().bytes(count: 1)[0]) * state.configuration.flowCreationsPerPurge < 256 {
            try? await state.storage.purgeExpired(now: now)
        }
        return JSONResponse.json(
            .object([("flowId", .string(flowId)), ("expiresAt", .string(RFC3339.format(expiresAt)))]), status: .created)
    }

    /// `POST /recovery/flows/{flowId}/verify` `{"code"}` → 200 `{"token", "userId", "purpose", "expiresAt"}`;
    /// `userId` is the flow's identifier, the user the token acts for (what the user-scoped routes take in
    /// their path), so an integrator need not keep it from the flow's creation.
    func verifyFlow(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let flowId = try RequestReading.issuedIdentifier(context, "flowId", what: "recovery flow")
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["code"])
        let text = try body.string("code")
        guard text.utf8.count == 6, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else {
            throw APIError.badRequest("code must be six digits")
        }
        let expected = codeHashes(flowId: flowId, code: SecureBytes(copying: Array(text.utf8)))
        let now = try await state.now()
        let outcome = try await state.storage.verifyFlow(
            id: flowId, address: clientAddress(request, context), limits: state.configuration.rateLimits,
            maximumWrongAttempts: ServerState.maximumWrongAttempts,
            tokenLifetime: Int64(state.configuration.tokenLifetimeSeconds),
            origin: AuditOrigin(requestId: context.requestId, at: now)
        ) { stored in
            // SecureBytes == is constant time; every master key's hash is compared, so timing names none.
            var matched = false
            for hash in expected where SecureBytes(copying: stored) == SecureBytes(copying: hash) { matched = true }
            return matched
        }
        switch outcome {
        case .verified(let identifier, let purpose):
            let issued = state.tokens.issue(
                userId: identifier, purpose: purpose, now: now,
                lifetime: Int64(state.configuration.tokenLifetimeSeconds))
            return JSONResponse.json(
                .object([
                    ("token", .string(issued.text)), ("userId", .string(identifier)),
                    ("purpose", .string(purpose.rawValue)),
                    ("expiresAt", .string(RFC3339.format(issued.token.expiresAt))),
                ]))
        case .wrongCode(let remaining):
            throw APIError(
                .unauthorized, .wrongCode, "wrong code; \(remaining) attempt\(remaining == 1 ? "" : "s") left")
        case .ended(let reason):
            // verified, wrongCode and exhausted are counted from their audit rows once committed.
            state.metrics.otpAttempt("flowEnded")
            throw APIError(.gone, .flowEnded, reason)
        case .notFound:
            throw APIError.notFound("no such recovery flow")
        case .rateLimited:
            state.metrics.otpAttempt("rateLimited")
            let limits = state.configuration.rateLimits
            throw Self.rateLimited([limits.verifyPerIdentifier, limits.verifyPerAddress], now: now)
        }
    }

    /// HMAC-SHA256(otp key, flowId || 0x00 || code) under each master key's OTP key, the first master
    /// key's first (what a new flow stores): the database never holds a code, and a flow created by a
    /// process whose first master key differs still verifies during a rotation.
    func codeHashes(flowId: String, code: SecureBytes) -> [[UInt8]] {
        let message = SecureBytes.concatenating([SecureBytes(copying: Array(flowId.utf8) + [0]), code])
        return state.otpKeys.map { key in
            message.withUnsafeBytes { HMACSHA256.authenticate(Array($0), key: key) }.revealedBytes()
        }
    }

    /// A 429 whose `Retry-After` is the time until both fixed windows that may have refused (the
    /// identifier's and the client address's) start anew, so a retry then is counted afresh.
    static func rateLimited(_ limits: [ServerConfiguration.RateLimit], now: Int64) -> APIError {
        let seconds =
            limits.map { limit in
                let window = Int64(max(limit.windowSeconds, 1))
                return Int(window - now % window)
            }.max() ?? 1
        return APIError(.rateLimited, "too many attempts; retry in \(seconds) seconds", retryAfterSeconds: seconds)
    }

    /// Six uniformly random digits (rejection sampling over 32-bit values).
    static func randomCode() -> SecureBytes {
        let random = SystemRandom()
        while true {
            let value = random.secureBytes(count: 4).withUnsafeBytes { bytes in
                bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            }
            guard value < 4_294_000_000 else { continue }
            var number = value % 1_000_000
            return SecureBytes(count: 6) { out in
                for index in (0..<6).reversed() {
                    out[index] = UInt8(ascii: "0") + UInt8(number % 10)
                    number /= 10
                }
            }
        }
    }
}
