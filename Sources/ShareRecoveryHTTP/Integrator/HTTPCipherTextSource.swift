public import ShareRecovery

/// Fetches cipherTexts from the integrator backup API:
/// `GET {base}/users/{userId}/user-backup-share?backupMethod=M` → `{"cipherText": "…"}`.
///
/// Errors: `ShareRecoveryError` `notFound` for a 404, a shared format code (e.g.
/// `malformedCipherText`) the server named, and `malformedInput` for a body that is too large, not
/// JSON, or not exactly `{"cipherText": string}`; ``TransportError`` for the API's refusals and
/// `requestRejected` (other 4xx, never retried), `unavailable` after the retries for 5xx and
/// connection failures, `timedOut` when the transport's deadline passes.
public struct HTTPCipherTextSource: CipherTextSource, CustomStringConvertible {
    private let api: IntegratorAPI
    private let tokenProvider: TokenProvider?

    /// Creates a source.
    /// - Parameters:
    ///   - baseURL: The API's base, e.g. `https://backup.example.com/api` (trailing slashes are ignored).
    ///   - tokenProvider: Supplies a bearer token of purpose ``TokenPurpose/recover``; `nil` sends none.
    ///   - transport: Timeouts, retries and limits (defaults: 10 s, 3 attempts, 256 KiB).
    public init(baseURL: String, tokenProvider: TokenProvider? = nil, transport: HTTPTransport = HTTPTransport()) {
        self.api = IntegratorAPI(baseURL: URLText.base(baseURL), transport: transport)
        self.tokenProvider = tokenProvider
    }

    /// Fetches the cipherText text for a user and method.
    /// - Parameters:
    ///   - userId: The integrator's user id (percent-encoded into the path).
    ///   - method: The backup method (sent as its `BackupMethod.apiName`).
    /// - Returns: The cipherText text as the API stored it (parsed later by the engine).
    /// - Throws: `ShareRecoveryError` as listed on the type.
    public func fetchCipherText(userId: String, method: BackupMethod) async throws -> String {
        let call = try await api.call(
            .get, url: try api.backupShareURL(userId: userId, method: method),
            operation: IntegratorAPI.backupShareOperation,
            purpose: .recover, tokenProvider: tokenProvider)
        let reply = try await api.transport.send(call)
        let fields = try JSONBody.object(reply, required: ["cipherText"], operation: call.operation)
        return try fields.string("cipherText")
    }

    /// The base URL (credentials redacted); never a token.
    public var description: String {
        "HTTPCipherTextSource(\(URLText.redacted(api.baseURL)), token: \(tokenProvider == nil ? "none" : "<redacted>"))"
    }
}
