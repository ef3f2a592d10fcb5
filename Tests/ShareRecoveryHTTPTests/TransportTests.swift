import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryHTTP

/// Pieces of the transport that need no server.
@Suite("HTTP transport")
struct TransportTests {
    @Test func descriptionsNeverShowCredentials() {
        let secret = SecureBytes(copying: Array("s3cr3t-hook".utf8))
        let base = "https://admin:hunter2@backup.example.com/api"
        let described = [
            String(describing: HTTPCipherTextSource(baseURL: base, tokenProvider: { _ in "tok-123" })),
            String(describing: HTTPCipherTextStore(baseURL: base, tokenProvider: { _ in "tok-123" })),
            String(describing: HTTPCustodianShareSource(webhookBaseURL: base, webhookSecret: secret)),
            String(describing: HTTPCustodianBackupSink(webhookBaseURL: base, webhookSecret: secret)),
            String(describing: HTTPCustodian(baseURL: base, tokenProvider: { _ in "tok-123" })),
        ]
        for text in described {
            #expect(!text.contains("hunter2") && !text.contains("tok-123") && !text.contains("s3cr3t"), "\(text)")
            #expect(text.contains("backup.example.com"))
        }
        var call = HTTPCall(method: .get, url: "http://x/y", operation: "GET /y")
        call.headers.append(.init(name: "Authorization", value: "Bearer tok-123", isSecret: true))
        call.headers.append(.init(name: "X-Trace", value: "visible", isSecret: false))
        #expect(!call.description.contains("tok-123"))
        #expect(call.description.contains("visible"))
    }

    @Test(arguments: [
        ("alice", "alice"), ("a b", "a%20b"), ("a/b", "a%2Fb"), ("ü", "%C3%BC"), ("a.b-c_d~e", "a.b-c_d~e"),
        ("%", "%25"), ("?x=1#f", "%3Fx%3D1%23f"), ("...", "..."),
    ])
    func pathSegmentsArePercentEncoded(input: String, encoded: String) throws {
        #expect(try URLText.segment(input, field: "userId") == encoded)
    }

    @Test(arguments: ["", ".", ".."])
    func dotAndEmptySegmentsAreRefused(input: String) {
        #expect(throws: ShareRecoveryError(.invalidParameters, "")) { try URLText.segment(input, field: "userId") }
    }

    @Test func baseURLs() {
        #expect(URLText.base("http://h:1/api//") == "http://h:1/api")
        #expect(URLText.redacted("http://u:p@h/x@y") == "http://<redacted>@h/x@y")
        #expect(URLText.redacted("http://h/x@y") == "http://h/x@y")
    }

    @Test func nonHTTPBaseIsRefused() async {
        let source = HTTPCipherTextSource(baseURL: "file:///etc", transport: testTransport())
        await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
            try await source.fetchCipherText(userId: "u", method: .password)
        }
    }

    @Test("a server message is quoted whole, and a 429's Retry-After becomes the wait")
    func serverMessageWholeAndRetryAfter() throws {
        let advice = "retry in 540 seconds"
        let message = String(repeating: "the reason at length, ", count: 20) + advice
        let body = #"{"error":{"code":"rateLimited","message":"\#(message)"}}"#
        let error = try #require(
            ServerErrorMapping.rejected("op", HTTPReply(status: 429, body: Array(body.utf8), retryAfterSeconds: 540))
                as? TransportError)
        #expect(error.code == .rateLimited && error.reason.hasSuffix(advice), "\(error.reason)")
        #expect(error.retryAfterSeconds == 540 && error.hint.contains("540 seconds"), "\(error.hint)")
        let withoutHeader = try #require(
            ServerErrorMapping.rejected("op", HTTPReply(status: 429, body: Array(body.utf8))) as? TransportError)
        #expect(withoutHeader.retryAfterSeconds == nil && !withoutHeader.hint.contains("540"))
    }

    @Test func serverErrorBodies() {
        func reply(_ status: Int, _ body: String) -> HTTPReply { HTTPReply(status: status, body: Array(body.utf8)) }
        // A shared check's code is the engine's; the API's refusals are the transport's; a foreign
        // code, or a non-credential code on a 401/403, is requestRejected.
        #expect(
            errorName(
                ServerErrorMapping.rejected("op", reply(422, #"{"error":{"code":"noMatchingShare","message":"m"}}"#)))
                == "engine.noMatchingShare")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(400, #"{"error":{"code":"tokenExpired"}}"#)))
                == "transport.requestRejected")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(401, #"{"error":{"code":"noMatchingShare"}}"#)))
                == "transport.requestRejected")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(400, #"{"error":{"code":"authenticationFailed"}}"#)))
                == "transport.requestRejected")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(401, #"{"error":{"code":"unauthorized"}}"#)))
                == "transport.unauthorized")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(403, #"{"error":{"code":"rateLimited"}}"#)))
                == "transport.requestRejected")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(429, #"{"error":{"code":"rateLimited"}}"#)))
                == "transport.rateLimited")
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(409, #"{"error":{"code":"conflict"}}"#)))
                == "transport.conflict")
        // The account's single flight is the engine's word, as on the device.
        #expect(
            errorName(ServerErrorMapping.rejected("op", reply(409, #"{"error":{"code":"operationInProgress"}}"#)))
                == "engine.operationInProgress")
        let foreign =
            ServerErrorMapping.rejected("op", reply(400, #"{"error":{"code":"tokenExpired"}}"#)) as? TransportError
        #expect(foreign?.status == 400 && foreign?.serverCode == "tokenExpired")
        // A 404 is notFound unless it names a resharing code.
        #expect(
            ServerErrorMapping.notFound("op", reply(404, #"{"error":{"code":"noMatchingShare"}}"#)).code
                == .noMatchingShare)
        #expect(ServerErrorMapping.notFound("op", reply(404, #"{"error":{"code":"unauthorized"}}"#)).code == .notFound)
        #expect(ServerErrorMapping.notFound("op", reply(404, "")).code == .notFound)
        // Non-JSON pages and odd codes still give a typed error with the status.
        let page = ServerErrorMapping.rejected("op", reply(429, "<html>slow down</html>"))
        #expect(errorName(page) == "transport.requestRejected" && errorReason(page).contains("HTTP 429"))
        // Where the server may echo what the client sent, its message stays out of the reason.
        let quiet = ServerErrorMapping.rejected(
            "op", reply(401, #"{"error":{"code":"wrongCode","message":"echo 123456"}}"#), quotingMessage: false)
        #expect(errorName(quiet) == "transport.wrongCode" && !errorReason(quiet).contains("123456"))
        let odd = ServerErrorMapping.summary(reply(400, #"{"error":{"code":"a\"b c","message":"line\nbreak"}}"#))
        #expect(odd == "HTTP 400, no server code: line break")
    }
}
