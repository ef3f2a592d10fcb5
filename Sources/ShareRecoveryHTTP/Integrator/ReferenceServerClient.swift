public import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import ShareCrypto
public import ShareRecovery

/// The reference server's calls that the engine does not make itself: custodian registration (an
/// integrator call) and OTP flows (the user's). The engine's own calls (sessions, cipherTexts,
/// webhooks) go through ``engineConfiguration(userId:store:tokens:webhookSecret:argon2:)``.
public struct ReferenceServerClient: Sendable {
    /// The server's base URL, without a trailing slash.
    public let base: String
    /// The HTTP client for every call, the engine's included.
    let client: HTTPClient

    /// - Parameters:
    ///   - base: The server's base URL.
    ///   - client: The HTTP client (see ``HTTPTransport/init(configuration:client:logger:)`` for what one of
    ///     your own should be configured with).
    public init(base: String, client: HTTPClient = HTTPTransport.sharedClient) {
        self.base = URLText.base(base)
        self.client = client
    }

    /// An engine that talks to this server: HTTP custodian, cipherText source and store, and (with the
    /// webhook secret, which only the integrator's backend holds) the custodian backup share sink.
    public func engineConfiguration(
        userId: String, store: any SigningShareStore, tokens: @escaping TokenProvider, webhookSecret: SecureBytes?,
        argon2: Argon2idParameters = .default
    ) -> RecoveryEngine.Configuration {
        let transport = HTTPTransport(client: client)
        return RecoveryEngine.Configuration(
            userId: userId,
            custodian: HTTPCustodian(
                baseURL: base, tokenProvider: tokens,
                // The custodian's own default: opening a session fetches and checks backup shares.
                transport: HTTPTransport(configuration: .init(timeout: .seconds(30)), client: client)),
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
    public func registerCustodianShare(_ share: ShareRecord, clientId: String, webhookSecret: SecureBytes) async throws {
        let key = try await request("GET", "/custodian/key", body: nil)
        guard case .string(let hex)? = key["publicKey"], let publicKey = Hex.decode(hex), publicKey.count == 32 else {
            throw ShareRecoveryError(.malformedInput, "the server sent no usable custodian key")
        }
        let sealed = try SealedBox.seal(try share.binary(), to: publicKey)
        _ = try await request(
            "POST", "/custodian/wallets",
            body: .object([("clientId", .string(clientId)), ("sealedShare", .string(Base64.encode(sealed)))]),
            webhookSecret: webhookSecret)
    }

    /// Starts an OTP flow (`POST /recovery/flows`); the code goes to the user out of band.
    /// - Returns: The flow id.
    public func startFlow(identifier: String, purpose: String) async throws -> String {
        let flow = try await request(
            "POST", "/recovery/flows",
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
        let verified = try await request("POST", "/recovery/flows/\(flowId)/verify", body: body)
        guard case .string(let token)? = verified["token"] else {
            throw ShareRecoveryError(.malformedInput, "the server's verify response has no token")
        }
        return SecureBytes(copying: Array(token.utf8))
    }

    /// One JSON request; non-2xx answers become errors as ``HTTPTransport`` maps them, with the
    /// status and the server's code but never its message, which the server may fill with what the
    /// client sent (a one-time code).
    private func request(_ method: String, _ path: String, body: JSONValue?, webhookSecret: SecureBytes? = nil)
        async throws -> JSONValue
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = .RAW(value: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: JSONWriter.write(body)))
        }
        if let webhookSecret {
            request.headers.add(name: "X-Webhook-Secret", value: String(decoding: webhookSecret.revealedBytes(), as: UTF8.self))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .seconds(10))
            bytes = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw TransportError(.unavailable, "\(method) \(path): the server could not be reached (\(type(of: error)))")
        }
        let reply = HTTPReply(status: Int(response.status.code), body: Array(bytes.readableBytesView))
        switch reply.status {
        case 200..<300: break
        case 404: throw ServerErrorMapping.notFound("\(method) \(path)", reply, quotingMessage: false)
        case 400..<500: throw ServerErrorMapping.rejected("\(method) \(path)", reply, quotingMessage: false)
        default:
            throw TransportError(
                .unavailable, "\(method) \(path): \(ServerErrorMapping.summary(reply, quotingMessage: false))", status: reply.status)
        }
        if bytes.readableBytes == 0 { return .null }
        do {
            return try StrictJSON.parse(Array(bytes.readableBytesView))
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(method) \(path): the response is not JSON")
        }
    }
}
