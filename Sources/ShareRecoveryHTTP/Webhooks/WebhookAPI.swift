import ShareCrypto
import ShareRecovery

/// The integrator's custodian webhooks (`{webhookBase}/backup…`), authenticated by the
/// `X-Webhook-Secret` header; shared by ``HTTPCustodianShareSource`` and ``HTTPCustodianBackupSink``.
struct WebhookAPI: Sendable {
    let baseURL: String
    let secret: SecureBytes
    let transport: HTTPTransport

    /// POSTs a JSON body to `{webhookBase}{path}`.
    func post(_ path: String, _ members: [(key: String, value: JSONValue)]) async throws -> (HTTPReply, String) {
        let operation = "POST {webhookBase}\(path)"
        var call = HTTPCall(method: .post, url: baseURL + path, operation: operation, body: JSONBody.encode(members))
        call.headers.append(try Credentials.webhookSecret(secret, operation: operation))
        return (try await transport.send(call), operation)
    }
}
