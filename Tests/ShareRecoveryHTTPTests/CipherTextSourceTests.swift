import HTTPTypes
import Hummingbird
import NIOCore
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

/// `HTTPCipherTextSource` against a real server, through a managed-mode engine recovery: every
/// failure is typed and leaves the device's share store untouched.
@Suite("HTTP cipherText source")
struct CipherTextSourceTests {
    static let route = RouterPath("/users/:userId/user-backup-share")
    static let token = "recover-token"

    /// One way the server can fail.
    enum Failure: String, CaseIterable, CustomTestStringConvertible {
        case notFound, badRequest, unauthorized, unauthorizedClaimingALocalCode, alwaysFailing, failingInternally, hang
        case stallMidBody, malformedJSON, wrongShape, oversize

        var testDescription: String { rawValue }

        /// The error code the engine must report.
        var code: String {
            switch self {
            case .notFound: "engine.notFound"
            case .unauthorized: "transport.unauthorized"
            case .badRequest, .unauthorizedClaimingALocalCode: "transport.requestRejected"
            case .alwaysFailing, .failingInternally: "transport.unavailable"
            case .hang, .stallMidBody: "transport.timedOut"
            case .malformedJSON, .wrongShape, .oversize: "engine.malformedInput"
            }
        }

        /// Requests the server must have seen: only lost answers (502, 503, 504, connection failures)
        /// are retried; a 500 is the server failing on this request, which it would again.
        var expectedHits: Int { self == .alwaysFailing ? 3 : 1 }

        func respond() async throws -> Response {
            switch self {
            case .notFound: return TestServer.error(.notFound, code: "notFound")
            case .badRequest: return TestServer.error(.badRequest, code: "invalidBackupMethod")
            case .unauthorized: return TestServer.error(.unauthorized, code: "unauthorized")
            case .unauthorizedClaimingALocalCode: return TestServer.error(.unauthorized, code: "malformedInput")
            case .alwaysFailing: return TestServer.error(.serviceUnavailable, code: "unavailable")
            case .failingInternally: return TestServer.error(.internalServerError, code: "internal")
            case .hang:
                try await Task.sleep(for: .seconds(5))
                return TestServer.json("{\"cipherText\":\"\"}")
            case .stallMidBody:
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: ResponseBody(contentLength: 100) { writer in
                        try await writer.write(ByteBuffer(string: "{\"cipherText\":\""))
                        try await Task.sleep(for: .seconds(5))
                    })
            case .malformedJSON: return TestServer.json("{\"cipherText\": \"AAAA\",}")
            case .wrongShape: return TestServer.json("{\"cipherText\": \"AAAA\", \"extra\": 1}")
            case .oversize:
                return TestServer.json("{\"cipherText\": \"" + String(repeating: "A", count: 300 * 1024) + "\"}")
            }
        }
    }

    @Test(arguments: Failure.allCases)
    func failureLeavesTheStoreUnchanged(failure: Failure) async throws {
        let world = try await World(seed: "source \(failure)")
        let hits = HitCounter()
        let timeout: Duration = .milliseconds(500)
        try await TestServer.with { router in
            router.get(Self.route) { _, _ in
                hits.hit()
                return try await failure.respond()
            }
        } _: { base in
            let source = HTTPCipherTextSource(
                baseURL: base, tokenProvider: { _ in Self.token }, transport: testTransport(timeout: timeout))
            let store = InMemorySigningShareStore(current: world.signing[0])
            let engine = world.engine(source: source, store: store)
            let started = ContinuousClock.now
            let error = await #expect(throws: (any Error).self) {
                try await engine.recover(method: .password, secret: .text(World.password))
            }
            let elapsed = ContinuousClock.now - started
            #expect(errorName(error) == failure.code, "\(String(describing: error))")
            #expect(await store.currentShare() == world.signing[0])
            #expect(await store.stagedShare() == nil)
            #expect(hits.value == failure.expectedHits)
            switch failure {
            case .hang, .stallMidBody:
                #expect(errorReason(error).contains("timed out"))
                // The handler never answers: any bound shows the deadline ended the call. A loose
                // one, so a slow machine (the sanitizer runs) cannot fail it.
                #expect(elapsed < .seconds(10))
            case .badRequest:
                // The server's own code travels in the reason.
                #expect(errorReason(error).contains("invalidBackupMethod"))
                #expect((error as? TransportError)?.serverCode == "invalidBackupMethod")
            case .unauthorizedClaimingALocalCode:
                // A 401 never takes over a local code, whatever the server calls it.
                #expect(errorReason(error).contains("HTTP 401"))
                #expect((error as? TransportError)?.status == 401)
            default: break
            }
        }
    }

    @Test func connectionClosedMidBodyIsRetriedThenTyped() async throws {
        let world = try await World(seed: "source truncated")
        let server = try TruncatingServer()
        defer { server.stop() }
        let source = HTTPCipherTextSource(baseURL: "http://127.0.0.1:\(server.port)", transport: testTransport())
        let store = InMemorySigningShareStore(current: world.signing[0])
        let error = await #expect(throws: TransportError.self) {
            try await world.engine(source: source, store: store).recover(
                method: .password, secret: .text(World.password))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.reason.contains("3 attempts") == true, "\(String(describing: error))")
        #expect(server.hits == 3)
        #expect(await store.currentShare() == world.signing[0])
        #expect(await store.stagedShare() == nil)
    }

    @Test func connectionRefusedIsTyped() async throws {
        // Bind and close a port so nothing listens there.
        let server = try TruncatingServer()
        let port = server.port
        server.stop()
        let source = HTTPCipherTextSource(
            baseURL: "http://127.0.0.1:\(port)", transport: testTransport(timeout: .seconds(60)))
        let started = ContinuousClock.now
        let error = await #expect(throws: TransportError.self) {
            try await source.fetchCipherText(userId: World.userId, method: .password)
        }
        // Three quick attempts, not a wait for the (60 s) deadline.
        #expect(error?.code == .unavailable)
        #expect(error?.reason.contains("3 attempts") == true, "\(String(describing: error))")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func cancellingARecoveryStopsAHangingFetch() async throws {
        let world = try await World(seed: "source cancel")
        try await TestServer.with { router in
            router.get(Self.route) { _, _ in try await Failure.hang.respond() }
        } _: { base in
            let source = HTTPCipherTextSource(baseURL: base, transport: testTransport(timeout: .seconds(60)))
            let store = InMemorySigningShareStore(current: world.signing[0])
            let engine = world.engine(source: source, store: store)
            let started = ContinuousClock.now
            let recovery = Task { try await engine.recover(method: .password, secret: .text(World.password)) }
            try await Task.sleep(for: .milliseconds(200))
            recovery.cancel()
            let error = await #expect(throws: ShareRecoveryError.self) { try await recovery.value }
            #expect(error?.code == .cancelled, "\(String(describing: error))")
            // Well before the 60 s deadline: the cancellation, not the timeout, ended it.
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(await store.currentShare() == world.signing[0])
            #expect(await store.stagedShare() == nil)
        }
    }

    @Test func serverErrorThenSuccessRecovers() async throws {
        let world = try await World(seed: "source retry")
        let hits = HitCounter()
        try await TestServer.with { router in
            router.get(Self.route) { request, _ in
                guard request.headers[.authorization] == "Bearer \(Self.token)" else {
                    return TestServer.error(.unauthorized, code: "unauthorized")
                }
                guard hits.hit() > 1 else { return TestServer.error(.serviceUnavailable, code: "unavailable") }
                return TestServer.json("{\"cipherText\":\"\(world.cipherText)\"}")
            }
        } _: { base in
            let source = HTTPCipherTextSource(
                baseURL: base, tokenProvider: { _ in Self.token }, transport: testTransport())
            let store = InMemorySigningShareStore(current: world.signing[0])
            let recovered = try await world.engine(source: source, store: store)
                .recover(method: .password, secret: .text(World.password))
            #expect(hits.value == 2)
            #expect(recovered.publicKey == world.signing[0].publicKey)
            #expect(recovered.generation == 1)
            #expect(await store.currentShare() == recovered)
            #expect(await store.stagedShare() == nil)
        }
    }

    @Test func happyPathSendsTheRightRequest() async throws {
        let world = try await World(seed: "source happy")
        let seen = RequestLog()
        try await TestServer.with { router in
            router.get(Self.route) { request, _ in
                seen.record(
                    path: request.uri.path, query: request.uri.query ?? "",
                    authorization: request.headers[.authorization] ?? "")
                return TestServer.json("{\"cipherText\":\"\(world.cipherText)\"}")
            }
        } _: { base in
            let purposes = PurposeLog()
            let source = HTTPCipherTextSource(
                baseURL: base + "/",
                tokenProvider: {
                    purposes.record($0); return Self.token
                }, transport: testTransport())
            let engine = world.engine(source: source, store: InMemorySigningShareStore())
            let recovered = try await engine.recover(method: .password, secret: .text(World.password))
            #expect(recovered.publicKey == world.signing[0].publicKey)
            #expect(
                seen.entries == [
                    .init(
                        path: "/users/user-1/user-backup-share", query: "backupMethod=PASSWORD",
                        authorization: "Bearer \(Self.token)")
                ])
            #expect(purposes.all == [.recover])
        }
    }

    @Test func userIdIsPercentEncoded() async throws {
        let seen = RequestLog()
        try await TestServer.with { router in
            router.get(Self.route) { request, _ in
                seen.record(path: request.uri.path, query: request.uri.query ?? "", authorization: "")
                return TestServer.json("{\"cipherText\":\"x\"}")
            }
        } _: { base in
            let source = HTTPCipherTextSource(baseURL: base, transport: testTransport())
            let text = try await source.fetchCipherText(userId: "a b/ü?#%", method: .googleDrive)
            #expect(text == "x")
            #expect(seen.entries.map(\.path) == ["/users/a%20b%2F%C3%BC%3F%23%25/user-backup-share"])
            #expect(seen.entries.map(\.query) == ["backupMethod=GDRIVE"])
            await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
                try await source.fetchCipherText(userId: "..", method: .password)
            }
        }
    }

    @Test func unsafeTokenIsRefusedBeforeAnyRequest() async throws {
        let hits = HitCounter()
        try await TestServer.with { router in
            router.get(Self.route) { _, _ in
                hits.hit()
                return TestServer.json("{\"cipherText\":\"x\"}")
            }
        } _: { base in
            for token in ["", "abc\r\nX-Injected: 1", "tok en"] {
                let source = HTTPCipherTextSource(
                    baseURL: base, tokenProvider: { _ in token }, transport: testTransport())
                await #expect(throws: ShareRecoveryError(.invalidParameters, "")) {
                    try await source.fetchCipherText(userId: World.userId, method: .password)
                }
            }
            struct ProviderFailure: Error {}
            let failing = HTTPCipherTextSource(
                baseURL: base, tokenProvider: { _ in throw ProviderFailure() }, transport: testTransport())
            await #expect(throws: TransportError(.tokenProviderFailed, "")) {
                try await failing.fetchCipherText(userId: World.userId, method: .password)
            }
            #expect(hits.value == 0)
        }
    }
}
