#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
public import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Tracing

/// A one-time code on its way to a user.
public struct OTPMessage: Sendable, CustomStringConvertible {
    /// The flow's identifier (user id or email).
    public let identifier: String
    /// The flow the code verifies.
    public let flowId: String
    /// The flow's purpose (`recover`, `addOrUpdateRecovery`, `deleteRecovery`).
    public let purpose: String
    /// When the flow expires (RFC 3339 UTC).
    public let expiresAt: String
    /// The six ASCII digits.
    public let code: SecureBytes

    /// Creates a message.
    /// - Parameters:
    ///   - identifier: The flow's identifier.
    ///   - flowId: The flow's id.
    ///   - purpose: The flow's purpose.
    ///   - expiresAt: The flow's expiry, RFC 3339 UTC.
    ///   - code: The six ASCII digits.
    public init(identifier: String, flowId: String, purpose: String, expiresAt: String, code: SecureBytes) {
        self.identifier = identifier
        self.flowId = flowId
        self.purpose = purpose
        self.expiresAt = expiresAt
        self.code = code
    }

    public var description: String { "OTPMessage(identifier: \(identifier), flowId: \(flowId), code redacted)" }

    /// The code as text, for a sender that must write it somewhere.
    public var codeText: String { code.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Delivers one-time codes (email, SMS, a file for demos). A failure makes `POST /recovery/flows` answer 502.
public protocol OTPSender: Sendable {
    /// Delivers the code to the user behind the identifier.
    /// - Throws: Any error: the flow is created but the client is told delivery failed.
    func send(_ message: OTPMessage) async throws
}

/// Demo sender: appends one JSON line `{"identifier","flowId","code"}` per code to a file (mode 0600). Each
/// line is one `write(2)` on an `O_APPEND` descriptor, so concurrent servers never interleave lines.
public struct FileOTPSender: OTPSender {
    /// The file.
    public let path: String

    /// - Parameter path: The file to append to (created when missing).
    public init(path: String) { self.path = path }

    public func send(_ message: OTPMessage) async throws {
        let line =
            JSONWriter.write(
                .object([
                    ("identifier", .string(message.identifier)), ("flowId", .string(message.flowId)),
                    ("code", .string(message.codeText)),
                ])) + "\n"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OTPDeliveryError(.deliveryFailed, "cannot open the OTP file") }
        defer { close(descriptor) }
        let bytes = Array(line.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw OTPDeliveryError(.deliveryFailed, "cannot append to the OTP file") }
    }

    /// The newest code this sender wrote for a flow: the file read as a user's inbox (demos, benches).
    /// - Throws: ``OTPDeliveryError`` `noCode` when the file cannot be read or has no code for the flow.
    public func code(flowId: String) throws -> SecureBytes {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OTPDeliveryError(.noCode, "cannot read the OTP file \(path)")
        }
        for line in data.split(separator: UInt8(ascii: "\n")).reversed() {
            guard let entry = try? StrictJSON.parse(Array(line)),
                case .string(flowId)? = entry["flowId"],
                case .string(let code)? = entry["code"]
            else { continue }
            return SecureBytes(copying: Array(code.utf8))
        }
        throw OTPDeliveryError(.noCode, "no one-time code for the flow in the OTP file \(path)")
    }
}

/// Posts each code as JSON `{"identifier","flowId","purpose","expiresAt","code"}` to a URL (an email or SMS
/// gateway of the integrator), signed per Standard Webhooks as integrator events are: `webhook-id` is the
/// flow's id, `webhook-timestamp` the Unix seconds of the attempt, `webhook-signature` `v1,` and the base64
/// HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the first secret of the secret file
/// (docs/server.md, "The OTP webhook").
public struct WebhookOTPSender: OTPSender {
    /// The endpoint.
    public let url: String
    private let signer: StandardWebhooksSigner
    private let timeoutSeconds: Int64

    /// - Parameters:
    ///   - url: The endpoint; any 2xx answer counts as delivered.
    ///   - secretFile: A file of `whsec_<base64>` secrets, one a line; the first signs, the others are
    ///     there while a secret rotates (docs/server.md, "Rotating secrets").
    ///   - timeoutSeconds: Request timeout.
    /// - Throws: ``ServerStartError`` `invalidConfiguration` when the file cannot be read or a line is
    ///   not a `whsec_` secret of 24 to 64 bytes (named by its number).
    public init(url: String, secretFile: String, timeoutSeconds: Int = 10) throws(ServerStartError) {
        self.init(url: url, signer: try StandardWebhooksSigner(secretFile: secretFile), timeoutSeconds: timeoutSeconds)
    }

    /// - Parameters:
    ///   - url: The endpoint.
    ///   - signer: The secrets that sign each message.
    ///   - timeoutSeconds: Request timeout.
    package init(url: String, signer: StandardWebhooksSigner, timeoutSeconds: Int = 10) {
        self.url = url
        self.signer = signer
        self.timeoutSeconds = Int64(timeoutSeconds)
    }

    /// The signing secret's key id (docs/server.md, "Rotating secrets").
    package var keyId: String { signer.keyId }
    /// How many secrets the file holds.
    package var secretCount: Int { signer.count }

    public func send(_ message: OTPMessage) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = JSONWriter.write(
            .object([
                ("identifier", .string(message.identifier)), ("flowId", .string(message.flowId)),
                ("purpose", .string(message.purpose)), ("expiresAt", .string(message.expiresAt)),
                ("code", .string(message.codeText)),
            ]))
        request.headers.add(
            contentsOf: signer.headers(id: message.flowId, timestamp: Int64(Date().timeIntervalSince1970), body: body))
        request.body = .bytes(ByteBuffer(string: body))
        // A client span carrying the request's trace (docs/server.md, "Tracing"); never the URL or the code.
        try await withSpan("POST otp-webhook", ofKind: .client) { span in
            InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
            let response = try await HTTPTransport.sharedClient.execute(request, timeout: .seconds(timeoutSeconds))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if span.isRecording {
                span.attributes["http.request.method"] = "POST"
                span.attributes["http.response.status_code"] = Int(response.status.code)
            }
            guard (200..<300).contains(response.status.code) else {
                throw OTPDeliveryError(.deliveryFailed, "the OTP webhook answered \(response.status.code)")
            }
        }
    }
}
