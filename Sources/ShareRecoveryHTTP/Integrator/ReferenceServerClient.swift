public import AsyncHTTPClient
public import ShareCrypto
public import ShareRecovery

/// The reference server's calls that the engine does not make itself: custodian registration (an
/// integrator call) and OTP flows (the user's). The engine's own calls (sessions, cipherTexts,
/// webhooks) go through ``engineConfiguration(userId:store:tokens:webhookSecret:argon2:)``.
///
/// Every call goes through one ``HTTPTransport``, so each mutating one carries an `Idempotency-Key`
/// (the same on every retry) and only lost answers are retried: a flow started twice because its
/// first answer was lost sends one code, and a verify retried gets the token the first one minted.
public struct ReferenceServerClient: Sendable {
    /// The server's base URL, without a trailing slash.
    public let base: String
    /// Every call's transport, the engine's included (its custodian's with a longer deadline).
    let transport: HTTPTransport

    /// - Parameters:
    ///   - base: The server's base URL.
    ///   - client: The HTTP client (see ``HTTPTransport/init(configuration:client:logger:)`` for what one of
    ///     your own should be configured with), under the transport's default timeouts and retries.
    public init(base: String, client: HTTPClient = HTTPTransport.sharedClient) {
        self.init(base: base, transport: HTTPTransport(client: client))
    }

    /// - Parameters:
    ///   - base: The server's base URL.
    ///   - transport: Timeouts, retries and limits of every call; the engine's custodian calls get at
    ///     least 30 s in all.
    public init(base: String, transport: HTTPTransport) {
        self.base = URLText.base(base)
        self.transport = transport
    }

    /// An engine that talks to this server: HTTP custodian, cipherText source and store, and (with the
    /// webhook secret, which only the integrator's backend holds) the custodian backup share sink.
    public func engineConfiguration(
        userId: String, store: any SigningShareStore, tokens: @escaping TokenProvider, webhookSecret: SecureBytes?,
        argon2: Argon2idParameters = .default
    ) -> RecoveryEngine.Configuration {
        var custodianLimits = transport.configuration
        // The custodian's own default: opening a session fetches and checks backup shares.
        custodianLimits.timeout = max(custodianLimits.timeout, .seconds(30))
        return RecoveryEngine.Configuration(
            userId: userId,
            custodian: HTTPCustodian(
                baseURL: base, tokenProvider: tokens,
                transport: HTTPTransport(
                    configuration: custodianLimits, client: transport.client, logger: transport.logger)),
            shareStore: store,
            cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens, transport: transport),
            cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens, transport: transport),
            custodianBackupSink: webhookSecret.map {
                HTTPCustodianBackupSink(webhookBaseURL: "\(base)/webhook", webhookSecret: $0, transport: transport)
            },
            argon2: argon2)
    }

    /// Seals a signing share to the server's custodian key and registers it for the client
    /// (`POST /custodian/wallets`, an integrator call authenticated by the webhook secret).
    public func registerCustodianShare(_ share: ShareRecord, clientId: String, webhookSecret: SecureBytes) async throws
    {
        let key = try await request(.get, "/custodian/key", body: nil)
        guard case .string(let hex)? = key["publicKey"], let publicKey = Hex.decode(hex), publicKey.count == 32 else {
            throw ShareRecoveryError(.malformedInput, "the server sent no usable custodian key")
        }
        let sealed = try SealedBox.seal(try share.binary(), to: publicKey)
        _ = try await request(
            .post, "/custodian/wallets",
            body: .object([("clientId", .string(clientId)), ("sealedShare", .string(Base64.encode(sealed)))]),
            webhookSecret: webhookSecret)
    }

    /// Starts an OTP flow (`POST /recovery/flows`); the code goes to the user out of band.
    /// - Returns: The flow id.
    public func startFlow(identifier: String, purpose: String) async throws -> String {
        let flow = try await request(
            .post, "/recovery/flows",
            body: .object([("identifier", .string(identifier)), ("purpose", .string(purpose))]))
        guard case .string(let flowId)? = flow["flowId"] else {
            throw ShareRecoveryError(.malformedInput, "the server's flow response has no flowId")
        }
        return flowId
    }

    /// Verifies a flow's code (`POST /recovery/flows/{id}/verify`).
    /// - Returns: The purpose-bound token, a credential: callers keep it out of output and logs.
    public func verifyFlow(flowId: String, code: SecureBytes) async throws -> SecureBytes {
        let body = JSONValue.object([("code", .string(String(decoding: code.revealedBytes(), as: UTF8.self)))])
        let verified = try await request(
            .post, "/recovery/flows/\(try URLText.segment(flowId, field: "flowId"))/verify", body: body,
            operation: "/recovery/flows/{flowId}/verify")
        guard case .string(let token)? = verified["token"] else {
            throw ShareRecoveryError(.malformedInput, "the server's verify response has no token")
        }
        return SecureBytes(copying: Array(token.utf8))
    }

    /// One JSON request through the transport; its errors carry the status and the server's code but
    /// never its message, which the server may fill with what the client sent (a one-time code).
    /// - Parameter operation: The path for logs and reasons, without identifiers (`path` when it has none).
    private func request(
        _ method: HTTPCall.Method, _ path: String, body: JSONValue?, webhookSecret: SecureBytes? = nil,
        operation: String? = nil
    ) async throws -> JSONValue {
        var call = HTTPCall(
            method: method, url: base + path, operation: "\(method.rawValue) \(operation ?? path)",
            body: body.map { Array(JSONWriter.write($0).utf8) })
        call.quotesServerMessage = false
        if let webhookSecret {
            call.headers.append(try Credentials.webhookSecret(webhookSecret, operation: call.operation))
        }
        let reply = try await transport.send(call)
        if reply.body.isEmpty { return .null }
        do {
            return try StrictJSON.parse(reply.body)
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(call.operation): the response is not JSON")
        }
    }
}
