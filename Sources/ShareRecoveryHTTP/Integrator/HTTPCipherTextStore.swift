public import ShareRecovery

/// Keeps cipherTexts through the integrator backup API, with a bearer token for each purpose:
/// - `PUT {base}/users/{userId}/user-backup-share?backupMethod=M` `{"cipherText"}` → 204 (``TokenPurpose/addOrUpdateRecovery``)
/// - `DELETE` of the same resource → 204, a 404 counting as done (``TokenPurpose/deleteRecovery``)
/// - `GET {base}/users/{userId}/recovery-methods` → `{"methods": ["PASSWORD", …]}` (a token of any purpose; asked for as ``TokenPurpose/recover``)
///
/// Errors are those of ``HTTPTransport``. Write tokens are single-use on the server, so a write
/// retried after a lost answer may be refused (``TransportError/Code/requestRejected``) although the first one landed.
public struct HTTPCipherTextStore: CipherTextStore, CustomStringConvertible {
    private let api: IntegratorAPI
    private let tokenProvider: TokenProvider

    /// Creates a store.
    /// - Parameters:
    ///   - baseURL: The API's base (trailing slashes are ignored).
    ///   - tokenProvider: Supplies a bearer token for each ``TokenPurpose``.
    ///   - transport: Timeouts, retries and limits.
    public init(baseURL: String, tokenProvider: @escaping TokenProvider, transport: HTTPTransport = HTTPTransport()) {
        self.api = IntegratorAPI(baseURL: URLText.base(baseURL), transport: transport)
        self.tokenProvider = tokenProvider
    }

    /// Stores (or replaces) a cipherText.
    /// - Parameters:
    ///   - cipherText: The base64 text; the server checks it parses and is of `method`.
    ///   - userId: The integrator's user id.
    ///   - method: The backup method.
    /// - Throws: `ShareRecoveryError` (a 400 for a cipherText of another method
    ///   arrives as the server's code, e.g. `malformedCipherText`) or ``TransportError``.
    public func storeCipherText(_ cipherText: String, userId: String, method: BackupMethod) async throws {
        let call = try await api.call(
            .put, url: try api.backupShareURL(userId: userId, method: method),
            operation: IntegratorAPI.backupShareOperation,
            purpose: .addOrUpdateRecovery, tokenProvider: tokenProvider,
            body: JSONBody.encode([("cipherText", .string(cipherText))]))
        _ = try await api.transport.send(call)
    }

    /// Deletes a cipherText; a missing one (404) is not an error.
    /// - Parameters:
    ///   - userId: The integrator's user id.
    ///   - method: The backup method.
    /// - Throws: ``TransportError`` or `ShareRecoveryError` for any other failure.
    public func deleteCipherText(userId: String, method: BackupMethod) async throws {
        let call = try await api.call(
            .delete, url: try api.backupShareURL(userId: userId, method: method),
            operation: IntegratorAPI.backupShareOperation, purpose: .deleteRecovery, tokenProvider: tokenProvider)
        do {
            _ = try await api.transport.send(call)
        } catch let error as ShareRecoveryError where error.code == .notFound {
            return
        }
    }

    /// The methods with a stored cipherText, in the server's order.
    /// - Parameter userId: The integrator's user id.
    /// - Returns: The methods.
    /// - Throws: `ShareRecoveryError`; `malformedInput` for an unknown method name.
    public func storedMethods(userId: String) async throws -> [BackupMethod] {
        let call = try await api.call(
            .get, url: try api.methodsURL(userId: userId), operation: IntegratorAPI.methodsOperation,
            // The server accepts a token of any purpose for the user here; a provider asked for `recover`
            // may hand back whichever unexpired token of this user it holds.
            purpose: .recover, tokenProvider: tokenProvider)
        let reply = try await api.transport.send(call)
        let names = try JSONBody.object(reply, required: ["methods"], operation: call.operation).stringArray("methods")
        var methods: [BackupMethod] = []
        for name in names {
            guard let method = BackupMethod(apiName: name) else {
                throw ShareRecoveryError(.malformedInput, "\(call.operation): unknown backup method in the response")
            }
            if !methods.contains(method) { methods.append(method) }
        }
        return methods
    }

    /// The base URL (credentials redacted); never a token.
    public var description: String { "HTTPCipherTextStore(\(URLText.redacted(api.baseURL)), token: <redacted>)" }
}
