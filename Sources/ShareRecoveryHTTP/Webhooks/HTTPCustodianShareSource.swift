public import ShareCrypto
public import ShareRecovery

/// Fetches a client's custodian backup shares from the integrator's webhook:
/// `POST {webhookBase}/backup/fetch` `{"clientId"}` with `X-Webhook-Secret` → `{"backupShares": ["…"]}`.
///
/// The default transport gives up after 10 s in all. Errors are those of ``HTTPTransport``, and
/// `malformedInput` for a body that is not exactly `{"backupShares": [string]}`; the shares
/// themselves are checked later, by docs/formats.md §7 selection.
public struct HTTPCustodianShareSource: CustodianShareSource, CustomStringConvertible {
    private let api: WebhookAPI

    /// Creates a source.
    /// - Parameters:
    ///   - webhookBaseURL: The webhooks' base, e.g. `https://integrator.example.com/webhook`.
    ///   - webhookSecret: The shared secret sent as `X-Webhook-Secret` (visible ASCII).
    ///   - transport: Timeouts, retries and limits.
    public init(webhookBaseURL: String, webhookSecret: SecureBytes, transport: HTTPTransport = HTTPTransport()) {
        self.api = WebhookAPI(baseURL: URLText.base(webhookBaseURL), secret: webhookSecret, transport: transport)
    }

    /// The §6 JSON strings stored for a client.
    /// - Parameter clientId: The integrator's client (user) id.
    /// - Returns: The shares, possibly none.
    /// - Throws: `ShareRecoveryError`.
    public func fetchBackupShares(clientId: String) async throws -> [String] {
        // A read: a repeat serves the shares again (and is audited again), so no Idempotency-Key.
        let (reply, operation) = try await api.post("/backup/fetch", [("clientId", .string(clientId))], reads: true)
        return try JSONBody.object(reply, required: ["backupShares"], operation: operation).stringArray("backupShares")
    }

    /// The base URL (credentials redacted); never the webhook secret.
    public var description: String {
        "HTTPCustodianShareSource(\(URLText.redacted(api.baseURL)), webhookSecret: <redacted>)"
    }
}
