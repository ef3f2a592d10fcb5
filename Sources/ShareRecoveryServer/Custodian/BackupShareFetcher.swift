import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Fetches a client's custodian backup shares from the integrator's `{webhookBase}/backup/fetch` webhook
/// (X-Webhook-Secret, bounded time and size). Any failure is the integrator's, not the client's: 502.
struct BackupShareFetcher: Sendable {
    /// Largest fetch answer read.
    static let maximumResponseSize = 16 * 1024 * 1024
    let secret: SecureBytes
    let timeoutSeconds: Int64

    func fetch(clientId: String, webhookBase: String) async throws(APIError) -> [String] {
        let failure = { (why: String) in
            APIError(.badGateway, .sourceFailure, "fetching custodian backup shares failed: \(why)")
        }
        var request = HTTPClientRequest(url: webhookBase + "/backup/fetch")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(
            name: "X-Webhook-Secret", value: secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        request.body = .bytes(ByteBuffer(string: JSONWriter.write(.object([("clientId", .string(clientId))]))))
        let body: ByteBuffer
        let status: UInt
        do {
            // The shared client never follows redirects: the webhook secret only goes to webhookBase.
            let response = try await HTTPTransport.sharedClient.execute(request, timeout: .seconds(timeoutSeconds))
            status = response.status.code
            body = try await response.body.collect(upTo: Self.maximumResponseSize)
        } catch {
            throw failure("the webhook is unreachable or too slow")
        }
        guard status == 200 else { throw failure("the webhook answered \(status)") }
        guard
            case .object(let members)? = try? StrictJSON.parse(
                Array(body.readableBytesView), maximumSize: Self.maximumResponseSize),
            members.count == 1, members[0].key == "backupShares", case .array(let elements) = members[0].value
        else { throw failure("the answer is not {\"backupShares\": [...]}") }
        var shares: [String] = []
        for element in elements {
            guard case .string(let text) = element else { throw failure("backupShares must hold strings") }
            shares.append(text)
        }
        return shares
    }
}
