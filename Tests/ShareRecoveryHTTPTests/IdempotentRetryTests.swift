import HTTPTypes
import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

/// The transport's side of retrying without fear: every request names its operation
/// (`X-Request-Id`), every mutating call carries one `Idempotency-Key` on all its attempts, and only
/// lost answers are retried, each retry reported to the operation.
@Suite("Idempotent retries")
struct IdempotentRetryTests {
    static let route = RouterPath("/users/:userId/user-backup-share")

    /// The headers of every request the server saw, and a script of answers by request number.
    final class Recorder: Sendable {
        private let seen = Locked<[(method: String, key: String?, requestId: String?)]>([])

        func record(_ request: Request) -> Int {
            let key = request.headers[HTTPField.Name("Idempotency-Key")!]
            let id = request.headers[HTTPField.Name("X-Request-Id")!]
            return seen.withLock {
                $0.append((request.method.rawValue, key, id))
                return $0.count
            }
        }

        var all: [(method: String, key: String?, requestId: String?)] { seen.withLock { $0 } }
    }

    final class Retries: Sendable {
        private let notes = Locked<[OperationContext.Retry]>([])
        func note(_ retry: OperationContext.Retry) { notes.withLock { $0.append(retry) } }
        var all: [OperationContext.Retry] { notes.withLock { $0 } }
    }

    @Test("a PUT keeps one key over its retries, a GET has none, and every request names the operation")
    func keysAndRequestIds() async throws {
        let recorder = Recorder()
        let retries = Retries()
        try await TestServer.with { router in
            router.put(Self.route) { request, _ in
                // Two lost answers, then the write.
                recorder.record(request) <= 2
                    ? TestServer.error(.serviceUnavailable, code: "unavailable") : Response(status: .noContent)
            }
            router.get(Self.route) { request, _ in
                _ = recorder.record(request)
                return TestServer.json(#"{"cipherText":"AAAA"}"#)
            }
        } _: { base in
            let store = HTTPCipherTextStore(baseURL: base, tokenProvider: { _ in "t" }, transport: testTransport())
            let source = HTTPCipherTextSource(baseURL: base, tokenProvider: { _ in "t" }, transport: testTransport())
            let context = OperationContext(onRetry: retries.note)
            try await OperationContext.$current.withValue(context) {
                try await store.storeCipherText("AAAA", userId: "u", method: .password)
                _ = try await source.fetchCipherText(userId: "u", method: .password)
            }
            // A second call outside any operation: a new key and its own request id.
            try await store.storeCipherText("AAAA", userId: "u", method: .password)

            let all = recorder.all
            #expect(all.map(\.method) == ["PUT", "PUT", "PUT", "GET", "PUT"])
            let firstKey = try #require(all[0].key)
            #expect(IdempotentRetryTests.isRandomHex(firstKey))
            #expect(all[1].key == firstKey && all[2].key == firstKey, "one key for the call, on every attempt")
            #expect(all[3].key == nil, "a GET carries no key")
            #expect(all[4].key != nil && all[4].key != firstKey, "a new call, a new key")
            #expect(all[0..<4].allSatisfy { $0.requestId == context.requestId })
            #expect(all[4].requestId != nil && all[4].requestId != context.requestId)
            #expect(retries.all.map(\.attempt) == [2, 3])
            #expect(retries.all.allSatisfy { $0.reason.contains("HTTP 503") })
        }
    }

    @Test("a 409 requestInProgress is retried; an attempt without an answer in time is given up and retried")
    func inProgressAndSlowAttempts() async throws {
        let recorder = Recorder()
        try await TestServer.with { router in
            router.put(Self.route) { request, _ in
                switch recorder.record(request) {
                case 1: return TestServer.error(.conflict, code: "requestInProgress")
                case 2:
                    // Longer than the attempt's time: the client gives this attempt up.
                    try await Task.sleep(for: .seconds(2))
                    return Response(status: .noContent)
                default: return Response(status: .noContent)
                }
            }
        } _: { base in
            let store = HTTPCipherTextStore(
                baseURL: base, tokenProvider: { _ in "t" },
                transport: testTransport(timeout: .seconds(5), attemptTimeout: .milliseconds(300)))
            try await store.storeCipherText("AAAA", userId: "u", method: .password)
            let all = recorder.all
            #expect(all.count == 3)
            #expect(Set(all.map(\.key)).count == 1 && all[0].key != nil)
        }
    }

    @Test("the webhook's /backup/fetch only reads: no key, retried after a lost answer; its deliveries carry one")
    func webhookFetchGoesWithoutKey() async throws {
        let fetches = Recorder()
        let deliveries = Recorder()
        try await TestServer.with { router in
            router.post("/webhook/backup/fetch") { request, _ in
                fetches.record(request) == 1
                    ? TestServer.error(.serviceUnavailable, code: "unavailable")
                    : TestServer.json(#"{"backupShares":[]}"#)
            }
            router.post("/webhook/backup") { request, _ in
                _ = deliveries.record(request)
                return Response(status: .noContent)
            }
        } _: { base in
            let secret = SecureBytes(copying: Array("hook-secret".utf8))
            let source = HTTPCustodianShareSource(
                webhookBaseURL: base + "/webhook", webhookSecret: secret, transport: testTransport())
            let sink = HTTPCustodianBackupSink(
                webhookBaseURL: base + "/webhook", webhookSecret: secret, transport: testTransport())
            #expect(try await source.fetchBackupShares(clientId: "u") == [])
            try await sink.deliverBackupShare("{}", clientId: "u")
            #expect(fetches.all.count == 2 && fetches.all.allSatisfy { $0.key == nil }, "\(fetches.all)")
            #expect(deliveries.all.count == 1 && deliveries.all[0].key.map(Self.isRandomHex) == true)
        }
    }

    @Test("a plain 409 conflict is not retried")
    func conflictIsFinal() async throws {
        let recorder = Recorder()
        try await TestServer.with { router in
            router.put(Self.route) { request, _ in
                _ = recorder.record(request)
                return TestServer.error(.conflict, code: "conflict")
            }
        } _: { base in
            let store = HTTPCipherTextStore(baseURL: base, tokenProvider: { _ in "t" }, transport: testTransport())
            await #expect(throws: TransportError(.conflict, "")) {
                try await store.storeCipherText("AAAA", userId: "u", method: .password)
            }
            #expect(recorder.all.count == 1)
        }
    }

    @Test(
        "ReferenceServerClient's flows and registration: one key per call on every attempt, lost answers retried, codes never quoted"
    )
    func referenceServerClientGoesThroughTheTransport() async throws {
        let flows = Recorder()
        let verifies = Recorder()
        let keys = Recorder()
        let wallets = Recorder()
        let custodianKey = SealingKeyPair()
        try await TestServer.with { router in
            router.post("/recovery/flows") { request, _ in
                flows.record(request) == 1
                    ? TestServer.error(.serviceUnavailable, code: "unavailable")
                    : TestServer.json(#"{"flowId":"f1"}"#, status: .created)
            }
            router.post("/recovery/flows/:flowId/verify") { request, _ in
                switch verifies.record(request) {
                // The server may echo the code it was sent: the client must not quote it.
                case 1: return TestServer.error(.unauthorized, code: "wrongCode", message: "654321 is not the code")
                case 2: return TestServer.error(.badGateway, code: "sourceFailure")
                default: return TestServer.json(#"{"token":"tok"}"#)
                }
            }
            router.get("/custodian/key") { request, _ in
                _ = keys.record(request)
                return TestServer.json(#"{"publicKey":"\#(Hex.encode(custodianKey.publicKey))"}"#)
            }
            router.post("/custodian/wallets") { request, _ in
                wallets.record(request) == 1
                    ? TestServer.error(.gatewayTimeout, code: "unavailable") : Response(status: .noContent)
            }
        } _: { base in
            let client = ReferenceServerClient(base: base, transport: testTransport())
            #expect(try await client.startFlow(identifier: "u", purpose: "recover") == "f1")
            let wrong = await #expect(throws: TransportError(.wrongCode, "")) {
                _ = try await client.verifyFlow(flowId: "f1", code: SecureBytes(copying: Array("654321".utf8)))
            }
            #expect(wrong.map { !$0.reason.contains("654321") } == true, "\(String(describing: wrong))")
            let token = try await client.verifyFlow(flowId: "f1", code: SecureBytes(copying: Array("123456".utf8)))
            #expect(token.revealedBytes() == Array("tok".utf8))
            let share = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-ref")[1]
            try await client.registerCustodianShare(
                share, clientId: "u", webhookSecret: SecureBytes(copying: Array("hook-secret".utf8)))

            #expect(flows.all.count == 2 && verifies.all.count == 3 && wallets.all.count == 2)
            for (name, calls) in [
                ("flow", [flows.all]), ("verify", [Array(verifies.all[0..<1]), Array(verifies.all[1...])]),
                ("wallet", [wallets.all]),
            ] {
                for attempts in calls {
                    let key = attempts.first?.key
                    #expect(key.map(IdempotentRetryTests.isRandomHex) == true, "\(name): no Idempotency-Key")
                    #expect(attempts.allSatisfy { $0.key == key }, "\(name): one key on every attempt")
                }
            }
            let all = (flows.all + verifies.all + wallets.all).compactMap(\.key)
            #expect(Set(all).count == 4, "a new call, a new key")
            #expect(keys.all.count == 1 && keys.all[0].key == nil, "a GET carries no key")
        }
    }

    static func isRandomHex(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
