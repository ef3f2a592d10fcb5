public import ShareCrypto
public import ShareRecovery

/// Hands custodian backup shares to the integrator's webhooks, with `X-Webhook-Secret`:
/// - `POST {webhookBase}/backup` `{"clientId", "backupShare": "<§6 JSON>"}` → 204
/// - `POST {webhookBase}/backup/delete` `{"clientId", "backupMethod": "PASSWORD"…}` → 204
///
/// Both are idempotent on the server, so retries are safe. Errors are those of ``HTTPTransport``.
public struct HTTPCustodianBackupSink: CustodianBackupSink, CustomStringConvertible {
    private let api: WebhookAPI

    /// Creates a sink.
    /// - Parameters:
    ///   - webhookBaseURL: The webhooks' base, e.g. `https://integrator.example.com/webhook`.
    ///   - webhookSecret: The shared secret sent as `X-Webhook-Secret` (visible ASCII).
    ///   - transport: Timeouts, retries and limits.
    public init(webhookBaseURL: String, webhookSecret: SecureBytes, transport: HTTPTransport = HTTPTransport()) {
        self.api = WebhookAPI(baseURL: URLText.base(webhookBaseURL), secret: webhookSecret, transport: transport)
    }

    /// Delivers one custodian backup share.
    /// - Parameters:
    ///   - json: The §6 JSON text.
    ///   - clientId: The integrator's client (user) id.
    /// - Throws: `ShareRecoveryError`.
    public func deliverBackupShare(_ json: String, clientId: String) async throws {
        _ = try await api.post("/backup", [("clientId", .string(clientId)), ("backupShare", .string(json))])
    }

    /// Deletes the client's shares of one method.
    /// - Parameters:
    ///   - clientId: The integrator's client (user) id.
    ///   - method: The backup method (sent as its `BackupMethod.apiName`).
    /// - Throws: `ShareRecoveryError`.
    public func deleteBackupShares(clientId: String, method: BackupMethod) async throws {
        _ = try await api.post(
            "/backup/delete", [("clientId", .string(clientId)), ("backupMethod", .string(method.apiName))])
    }

    /// The base URL (credentials redacted); never the webhook secret.
    public var description: String {
        "HTTPCustodianBackupSink(\(URLText.redacted(api.baseURL)), webhookSecret: <redacted>)"
    }
}
