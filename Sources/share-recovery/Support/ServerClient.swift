import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// The reference server's calls that the engine does not make itself: custodian registration and
/// OTP flows. The engine's own calls (sessions, cipherTexts, webhooks) go through
/// ``engineConfiguration(userId:store:tokens:webhookSecret:)``.
struct ServerClient: Sendable {
    /// The server's base URL, without a trailing slash.
    let base: String

    init(base: String) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    /// An engine that talks to this server: HTTP custodian, cipherText source and store, and (with the
    /// webhook secret, which only the integrator's backend holds) the custodian backup share sink.
    func engineConfiguration(
        userId: String, store: any SigningShareStore, tokens: @escaping TokenProvider, webhookSecret: SecureBytes?,
        argon2: Argon2idParameters = .default
    ) -> RecoveryEngine.Configuration {
        RecoveryEngine.Configuration(
            userId: userId, custodian: HTTPCustodian(baseURL: base, tokenProvider: tokens), shareStore: store,
            cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens),
            cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens),
            custodianBackupSink: webhookSecret.map {
                HTTPCustodianBackupSink(webhookBaseURL: "\(base)/webhook", webhookSecret: $0)
            },
            argon2: argon2)
    }

    /// Seals a signing share to the server's custodian key and registers it for the client
    /// (`POST /custodian/wallets`, an integrator call authenticated by the webhook secret).
    func registerCustodianShare(_ share: ShareRecord, clientId: String, webhookSecret: SecureBytes) async throws {
        let key = try await request("GET", "/custodian/key", body: nil)
        guard case .string(let hex)? = key.member("publicKey"), let publicKey = Hex.decode(hex), publicKey.count == 32 else {
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
    func startFlow(identifier: String, purpose: String) async throws -> String {
        let flow = try await request(
            "POST", "/recovery/flows",
            body: .object([("identifier", .string(identifier)), ("purpose", .string(purpose))]))
        guard case .string(let flowId)? = flow.member("flowId") else {
            throw ShareRecoveryError(.malformedInput, "the server's flow response has no flowId")
        }
        return flowId
    }

    /// Verifies a flow's code (`POST /recovery/flows/{id}/verify`).
    /// - Returns: The purpose-bound token, a credential: callers keep it out of output and logs.
    func verifyFlow(flowId: String, code: SecureBytes) async throws -> SecureBytes {
        let body = JSONValue.object([("code", .string(String(decoding: code.revealedBytes(), as: UTF8.self)))])
        let verified = try await request("POST", "/recovery/flows/\(flowId)/verify", body: body)
        guard case .string(let token)? = verified.member("token") else {
            throw ShareRecoveryError(.malformedInput, "the server's verify response has no token")
        }
        return SecureBytes(copying: Array(token.utf8))
    }

    /// One JSON request; non-2xx answers become `requestRejected` with the status (never the body,
    /// which the server may fill with what the client sent).
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
            response = try await HTTPTransport.sharedClient.execute(request, timeout: .seconds(10))
            bytes = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw ShareRecoveryError(.sourceFailure, "\(method) \(path): the server could not be reached (\(type(of: error)))")
        }
        guard (200..<300).contains(response.status.code) else {
            throw ShareRecoveryError(.requestRejected, "\(method) \(path): HTTP \(response.status.code)")
        }
        if bytes.readableBytes == 0 { return .null }
        do {
            return try StrictJSON.parse(Array(bytes.readableBytesView))
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(method) \(path): the response is not JSON")
        }
    }
}

extension JSONValue {
    /// A member of an object, or `nil`.
    func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}
