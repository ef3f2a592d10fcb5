// Fuzz target: the reference server's request decoding, through the real router and route
// handlers in-process (Hummingbird's router test framework, no socket), on a fresh SQLite file.
//
// Input: an HTTP request as text: a first line `METHOD /path?query`, then `Name: value` header
// lines up to an empty line, then the body. Two placeholders reach past authentication:
// `Bearer @<purpose>` becomes a real token for user `fuzz-user` (issued at start-up through the OTP
// flow routes), and the webhook secret is the fixed text `fuzz-webhook-secret`.
// scripts/fuzz-seeds.py writes one seed per route with bodies taken from Vectors/.
//
// Invariants: no request makes a handler throw past the error middleware or answer 5xx other than
// 502 (upstream failure), and every error answer carries the documented body
// `{"error": {"code": "...", ...}}`.
import Dispatch
import Foundation
import FuzzSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer

let fuzzUser = "fuzz-user"
let webhookSecret = "fuzz-webhook-secret"
let purposes = ["recover", "addOrUpdateRecovery", "deleteRecovery"]

/// Keeps the one-time codes the flow routes send, so start-up can verify its own flows.
final class CapturingOTPSender: OTPSender {
    let codes = Locked<[String: String]>([:])
    func send(_ message: OTPMessage) async throws { codes.withLock { $0[message.flowId] = message.codeText } }
}

struct ParsedRequest {
    let method: HTTPRequest.Method
    let uri: String
    let headers: HTTPFields
    let body: [UInt8]
}

/// Splits the fuzz input into a request; `nil` for a first line that is no HTTP method and path.
func parseRequest(_ input: [UInt8], tokens: [String: String]) -> ParsedRequest? {
    var lines: [ArraySlice<UInt8>] = []
    var rest = input[...]
    while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
        let line = rest[rest.startIndex..<newline]
        rest = rest[(newline + 1)...]
        if line.isEmpty { break }
        lines.append(line)
    }
    if lines.isEmpty { lines.append(rest); rest = [] }
    let requestLine = String(decoding: lines[0], as: UTF8.self)
    guard let space = requestLine.firstIndex(of: " "),
        let method = HTTPRequest.Method(String(requestLine[..<space]))
    else { return nil }
    let uri = String(requestLine[requestLine.index(after: space)...])
    var headers = HTTPFields()
    for line in lines.dropFirst() {
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":"), let name = HTTPField.Name(String(text[..<colon])) else { continue }
        var value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("Bearer @"), let token = tokens[String(value.dropFirst("Bearer @".count))] {
            value = "Bearer " + token
        }
        headers.append(HTTPField(name: name, value: value))
    }
    return ParsedRequest(method: method, uri: uri, headers: headers, body: Array(rest))
}

func errorCode(_ body: ByteBuffer) -> String? {
    guard case .string(let code)? = (try? StrictJSON.parse(Array(body.readableBytesView)))?["error"]?["code"]
    else { return nil }
    return code
}

func execute(_ client: some TestClientProtocol, _ request: ParsedRequest) async throws -> TestResponse {
    try await client.execute(
        uri: request.uri, method: request.method, headers: request.headers,
        body: request.body.isEmpty ? nil : ByteBuffer(bytes: request.body))
}

/// Issues one token per purpose through the real flow routes (create, read the code, verify).
func issueTokens(_ client: some TestClientProtocol, otp: CapturingOTPSender) async throws -> [String: String] {
    var tokens: [String: String] = [:]
    for purpose in purposes {
        let created = try await client.execute(
            uri: "/recovery/flows", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: #"{"identifier":"\#(fuzzUser)","purpose":"\#(purpose)"}"#))
        guard created.status == .created,
            case .string(let flowId)? = (try? StrictJSON.parse(Array(created.body.readableBytesView)))?["flowId"],
            let code = otp.codes.withLock({ $0[flowId] })
        else { fuzzFailure("start-up: cannot create a \(purpose) flow (status \(created.status.code))") }
        let verified = try await client.execute(
            uri: "/recovery/flows/\(flowId)/verify", method: .post, headers: [.contentType: "application/json"],
            body: ByteBuffer(string: #"{"code":"\#(code)"}"#))
        guard verified.status == .ok,
            case .string(let token)? = (try? StrictJSON.parse(Array(verified.body.readableBytesView)))?["token"]
        else { fuzzFailure("start-up: cannot verify the \(purpose) flow (status \(verified.status.code))") }
        tokens[purpose] = token
    }
    return tokens
}

// One request at a time: libFuzzer's thread hands the input over and waits for the checked answer.
let (inputs, inputContinuation) = AsyncStream<[UInt8]>.makeStream()
let handled = DispatchSemaphore(value: 0)

let directory =
    FileManager.default.temporaryDirectory.path
    + "/share-recovery-fuzz-server-\(ProcessInfo.processInfo.processIdentifier)"
try? FileManager.default.removeItem(atPath: directory)
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
let otp = CapturingOTPSender()
var logger = Logger(label: "fuzz-server-requests")
logger.logLevel = .critical
let configuration = ServerConfiguration(
    host: "127.0.0.1", port: 0, database: .sqlite(path: directory + "/server.sqlite"),
    masterKey: .value(SecureBytes(copying: [UInt8](repeating: 7, count: 32))),
    webhookSecret: .value(SecureBytes(copying: Array(webhookSecret.utf8))), otpSender: otp,
    tokenLifetimeSeconds: 30 * 24 * 3600, logger: logger)
let application = try await makeServerApplication(configuration)

Task.detached {
    do {
        try await application.test(.router) { client in
            let tokens = try await issueTokens(client, otp: otp)
            handled.signal()
            for await input in inputs {
                defer { handled.signal() }
                guard let request = parseRequest(input, tokens: tokens) else { continue }
                let response = try await execute(client, request)
                let status = response.status.code
                // 502 is the documented answer when an upstream (custodian webhook, OTP delivery) fails,
                // and this configuration has no webhook to call; 500 means a handler escaped its errors.
                fuzzCheck(status < 500 || status == 502, "\(request.method) answered \(status)")
                if status >= 400 {
                    fuzzCheck(errorCode(response.body) != nil, "\(request.method) \(status) without an error body")
                }
            }
        }
    } catch {
        fuzzFailure("the in-process server stopped: \(error)")
    }
}
handled.wait()

runFuzzer { input in
    inputContinuation.yield(input)
    handled.wait()
}
