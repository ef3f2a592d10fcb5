import ShareCrypto
import ShareRecovery

/// The integrator's custodian webhooks (`{webhookBase}/backup…`), authenticated by the
/// `X-Webhook-Secret` header; shared by ``HTTPCustodianShareSource`` and ``HTTPCustodianBackupSink``.
struct WebhookAPI: Sendable {
    let baseURL: String
    let secret: SecureBytes
    let transport: HTTPTransport

    /// POSTs a JSON body to `{webhookBase}{path}`.
    /// - Parameter reads: The call only reads (it changes nothing a repeat could apply twice), so it
    ///   goes without an `Idempotency-Key`.
    func post(_ path: String, _ members: [(key: String, value: JSONValue)], reads: Bool = false) async throws -> (
        HTTPReply, String
    ) {
        let operation = "POST {webhookBase}\(path)"
        var call = HTTPCall(method: .post, url: baseURL + path, operation: operation, body: JSONBody.encode(members))
        call.sendsIdempotencyKey = !reads
        call.headers.append(try Credentials.webhookSecret(secret, operation: operation))
        return (try await transport.send(call), operation)
    }
}
