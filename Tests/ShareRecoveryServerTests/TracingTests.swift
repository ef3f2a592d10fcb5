import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing
import Tracing

@testable import ShareRecoveryServer

/// Every span a recording ``TraceContextTracer`` ended.
final class SpanRecorder: Sendable {
    private let spans = Locked<[FinishedSpan]>([])
    /// The tracer to bind with `withTracer`: it records into this.
    var tracer: TraceContextTracer { TraceContextTracer(onEnd: { span in self.spans.withLock { $0.append(span) } }) }
    var all: [FinishedSpan] { spans.withLock { $0 } }
    func trace(_ traceID: String) -> [FinishedSpan] { all.filter { $0.traceID == traceID } }
}

extension SpanAttributes {
    /// Every attribute as `key=value` text.
    var texts: [String] {
        var texts: [String] = []
        forEach { key, value in texts.append("\(key)=\(value)") }
        return texts
    }
}

/// docs/server.md, "Tracing": W3C `traceparent` in, spans per route, storage call and webhook call, and
/// `traceparent` out. A recording tracer is bound to each test's task (`withTracer`), which the server
/// it starts inherits, so tests running in parallel never see each other's spans.
@Suite struct TracingTests {
    static func randomHex(_ bytes: Int) -> String { Hex.encode(SystemRandom().bytes(count: bytes)) }

    @Test(
        "a traceparent's trace reaches the route's span, its storage spans, its webhook call and the webhook's own span",
        arguments: TestBackend.allCases)
    func propagatesIntoWebhook(backend: TestBackend) async throws {
        let recorder = SpanRecorder()
        try await withTracer(recorder.tracer) {
            try await TestWorld.with(backend) { world in
                let client = SessionClient(world: world, clientId: "traced")
                let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-trace")
                try await client.register(signing[1])
                let token = try await world.token(for: client.clientId, purpose: "recover")
                let traceID = Self.randomHex(16)
                let callerSpan = Self.randomHex(8)
                // A recovery fetches the custodian's backup shares from the integrator: this server's own
                // /webhook, over HTTP, so both sides of the webhook call are recorded here.
                let opened = try await client.openResponse(
                    purpose: "recovery", method: .password, ownShare: signing[0], token: token,
                    headers: [("traceparent", "00-\(traceID)-\(callerSpan)-01"), ("tracestate", "vendor=opaque")])
                #expect(opened.status < 500, "\(opened.text)")

                let spans = recorder.trace(traceID)
                let route = try #require(
                    spans.first { $0.operationName == "POST /recovery/sessions" }, "\(spans.map(\.operationName))")
                #expect(route.kind == .server)
                #expect(route.parentSpanID == callerSpan)
                #expect(route.spanID != callerSpan && route.spanID.count == 16)
                #expect(route.attributes["http.route"]?.toSpanAttribute() == .string("/recovery/sessions"))
                #expect(
                    route.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(Int64(opened.status)))
                let requestId = try #require(opened.headers.first { $0.0.lowercased() == "x-request-id" }?.1)
                #expect(route.attributes["share_recovery.request_id"]?.toSpanAttribute() == .string(requestId))

                let storage = spans.filter { $0.operationName.hasPrefix("storage.") }
                #expect(!storage.isEmpty)
                let system = backend == .sqlite ? "sqlite" : "postgresql"
                for span in storage {
                    #expect(span.kind == .client)
                    #expect(span.attributes["db.system.name"]?.toSpanAttribute() == .string(system))
                }
                #expect(storage.contains { $0.parentSpanID == route.spanID })

                let webhookCall = try #require(
                    spans.first { $0.kind == .client && $0.operationName.hasSuffix("/backup/fetch") },
                    "\(spans.map(\.operationName))")
                #expect(webhookCall.parentSpanID == route.spanID)
                #expect(webhookCall.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
                // The webhook's receiver extracted the traceparent the call sent: same trace, the call's span as parent.
                let received = try #require(spans.first { $0.operationName == "POST /webhook/backup/fetch" })
                #expect(received.kind == .server)
                #expect(received.parentSpanID == webhookCall.spanID)
                #expect(Set(spans.map(\.spanID)).count == spans.count)
                // Every span of the trace hangs off the caller's span through spans of the trace.
                let ids = Set(spans.map(\.spanID))
                for span in spans { #expect(span.parentSpanID == callerSpan || ids.contains(span.parentSpanID ?? "")) }
            }
        }
    }

    @Test("every span gets an id of its own, and every span without a parent a trace of its own")
    func identifiersAreDistinct() {
        let finished = Locked<[FinishedSpan]>([])
        let tracer = TraceContextTracer { span in finished.withLock { $0.append(span) } }
        let count = 10_000
        for index in 0..<count {
            tracer.startSpan("span \(index)", context: .topLevel, ofKind: .internal, at: DefaultTracerClock.now).end()
        }
        let spans = finished.withLock { $0 }
        #expect(spans.count == count)
        #expect(Set(spans.map(\.spanID)).count == count)
        #expect(Set(spans.map(\.traceID)).count == count)
        #expect(
            !spans.contains {
                $0.spanID == String(repeating: "0", count: 16) || $0.traceID == String(repeating: "0", count: 32)
            })
    }

    @Test("a ShareRecoveryHTTP client call is a client span of the caller's trace and sends its traceparent")
    func clientLibraryPropagates() async throws {
        let recorder = SpanRecorder()
        try await withTracer(recorder.tracer) {
            try await TestWorld.with(.sqlite) { world in
                let source = HTTPCustodianShareSource(
                    webhookBaseURL: world.servers[0].baseURL() + "/webhook",
                    webhookSecret: SecureBytes(copying: Array(world.webhookSecret.utf8)))
                let (shares, walletTrace) = try await withSpan("wallet.recover") { span in
                    (
                        try await source.fetchBackupShares(clientId: "nobody"),
                        TraceContextTracer.traceID(in: span.context)
                    )
                }
                #expect(shares.isEmpty)
                let traceID = try #require(walletTrace)
                let spans = recorder.trace(traceID)
                let wallet = try #require(spans.first { $0.operationName == "wallet.recover" })
                #expect(wallet.parentSpanID == nil)
                let call = try #require(
                    spans.first { $0.kind == .client && $0.operationName.hasSuffix("/backup/fetch") })
                #expect(call.parentSpanID == wallet.spanID)
                #expect(call.attributes["http.request.method"]?.toSpanAttribute() == .string("POST"))
                #expect(call.attributes["share_recovery.attempts"]?.toSpanAttribute() == .int64(1))
                let served = try #require(spans.first { $0.operationName == "POST /webhook/backup/fetch" })
                #expect(served.parentSpanID == call.spanID)
            }
        }
    }

    @Test(
        "without a traceparent each request starts its own trace; probes are not traced",
        arguments: TestBackend.allCases)
    func newTraces(backend: TestBackend) async throws {
        let recorder = SpanRecorder()
        try await withTracer(recorder.tracer) {
            try await TestWorld.with(backend) { world in
                let first = try await world.createFlow(identifier: "new-trace-1")
                let second = try await world.createFlow(identifier: "new-trace-2")
                #expect(first != second)
                let roots = recorder.all.filter { $0.operationName == "POST /recovery/flows" }
                #expect(roots.count == 2)
                #expect(roots.allSatisfy { $0.parentSpanID == nil && $0.traceID.count == 32 })
                #expect(Set(roots.map(\.traceID)).count == 2)

                let traceID = Self.randomHex(16)
                let health = try await world.send(
                    .GET, "/health", headers: [("traceparent", "00-\(traceID)-\(Self.randomHex(8))-01")])
                #expect(health.status == 200)
                #expect(recorder.trace(traceID).isEmpty)
            }
        }
    }

    @Test(
        "a malformed traceparent or tracestate is ignored: the request is answered, a new trace starts",
        arguments: TestBackend.allCases)
    func malformedIgnored(backend: TestBackend) async throws {
        let recorder = SpanRecorder()
        let traceID = Self.randomHex(16)
        let spanID = Self.randomHex(8)
        let malformed = [
            "garbage",
            "00-\(traceID)-\(spanID)",
            "00-\(traceID)-\(spanID)-01-extra",
            "00-00000000000000000000000000000000-\(spanID)-01",
            "00-\(traceID)-0000000000000000-01",
            "ff-\(traceID)-\(spanID)-01",
            "00-\(traceID.dropLast())g-\(spanID)-01",
            "00_\(traceID)_\(spanID)_01",
            String(repeating: "0", count: 4096),
        ]
        try await withTracer(recorder.tracer) {
            try await TestWorld.with(backend) { world in
                for (index, value) in malformed.enumerated() {
                    let response = try await world.send(
                        .POST, "/recovery/flows",
                        json: .object([("identifier", .string("malformed-\(index)")), ("purpose", .string("recover"))]),
                        headers: [("traceparent", value)])
                    #expect(response.status == 201, "\(value): \(response.text)")
                }
                let roots = recorder.all.filter { $0.operationName == "POST /recovery/flows" }
                #expect(roots.count == malformed.count)
                #expect(roots.allSatisfy { $0.parentSpanID == nil && $0.traceID != traceID })

                // A malformed tracestate drops the state alone: the traceparent still counts.
                let kept = Self.randomHex(16)
                let response = try await world.send(
                    .POST, "/recovery/flows",
                    json: .object([("identifier", .string("bad-state")), ("purpose", .string("recover"))]),
                    headers: [("traceparent", "00-\(kept)-\(spanID)-01"), ("tracestate", "=,==,;;")])
                #expect(response.status == 201)
                #expect(recorder.trace(kept).first { $0.kind == .server }?.parentSpanID == spanID)
            }
        }
    }

    @Test(
        "no span attribute, name or error carries a token, a secret, a one-time code or an identifier",
        arguments: TestBackend.allCases)
    func noSecretInSpans(backend: TestBackend) async throws {
        let recorder = SpanRecorder()
        try await withTracer(recorder.tracer) {
            try await TestWorld.with(backend) { world in
                let identifier = "alice-\(Self.randomHex(4))"
                let flowId = try await world.createFlow(identifier: identifier)
                let code = try #require(world.otp.code(flowId: flowId))
                let wrong = try await world.send(
                    .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string("000000"))]))
                #expect(wrong.status >= 400)
                let token = try await world.token(for: identifier, purpose: "addOrUpdateRecovery")
                let cipherText = try Fixtures.cipherText()
                let put = try await world.send(
                    .PUT, "/users/\(identifier)/user-backup-share?backupMethod=PASSWORD",
                    json: .object([("cipherText", .string(cipherText))]), headers: world.bearer(token))
                #expect(put.status < 500)
                _ = try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(identifier))]),
                    headers: world.webhookHeaders)

                let spans = recorder.all
                #expect(spans.count > 5)
                let forbidden = [token, world.webhookSecret, code, identifier, flowId, "Bearer", cipherText]
                for span in spans {
                    let texts = [span.operationName] + span.attributes.texts + span.errorTypes + span.events
                    for text in texts {
                        for secret in forbidden { #expect(!text.contains(secret), "\(span.operationName): \(text)") }
                    }
                }
            }
        }
    }
}
