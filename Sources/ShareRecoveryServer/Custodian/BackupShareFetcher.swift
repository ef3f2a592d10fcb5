import HTTPTypes
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Fetches a client's custodian backup shares from the integrator's `{webhookBase}/backup/fetch` webhook
/// through the one webhook client, ``HTTPCustodianShareSource`` (X-Webhook-Secret, bounded time, attempts
/// and size; redirects never followed). Any failure is the integrator's, not the client's: 502.
struct BackupShareFetcher: Sendable {
    /// Largest fetch answer read: every backup share a client could have, with room to spare.
    static let maximumResponseSize = 16 * 1024 * 1024
    let secret: SecureBytes
    /// Time for the whole fetch, retries included.
    let timeoutSeconds: Int64

    func fetch(clientId: String, webhookBase: String) async throws(APIError) -> [String] {
        let transport = HTTPTransport(
            configuration: .init(timeout: .seconds(timeoutSeconds), maximumResponseSize: Self.maximumResponseSize))
        let source = HTTPCustodianShareSource(webhookBaseURL: webhookBase, webhookSecret: secret, transport: transport)
        do {
            return try await source.fetchBackupShares(clientId: clientId)
        } catch {
            // The transport's reasons name the operation and status, never the secret.
            let why =
                (error as? TransportError)?.reason ?? (error as? ShareRecoveryError)?.reason
                ?? "the webhook could not be reached"
            throw APIError(.badGateway, .sourceFailure, "fetching custodian backup shares failed: \(why)")
        }
    }
}
