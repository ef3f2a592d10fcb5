import Foundation
import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Which database a test runs against. Tests take every case; a PostgreSQL case without a database
/// shows as skipped (``postgresURLOrSkip()``), never silently absent.
enum TestBackend: String, Sendable, CustomTestStringConvertible, CaseIterable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    static let postgresURLVariable = "SHARE_RECOVERY_TEST_POSTGRES_URL"

    /// The PostgreSQL URL of `.ci/postgres.sh`, when set.
    static let postgresURL: String? = {
        guard let value = ProcessInfo.processInfo.environment[postgresURLVariable], !value.isEmpty else { return nil }
        return value
    }()

    /// Why a PostgreSQL case does not run, in the words a reader of `swift test` output searches for.
    static let postgresSkipped: Comment =
        "PostgreSQL tests SKIPPED: \(postgresURLVariable) is not set. Run `eval \"$(.ci/postgres.sh)\"` first to run them."

    /// The PostgreSQL URL, or, without one, this test case ends as skipped: a warning in the output
    /// (Swift Testing 6.3 reports a cancelled case as passed, so the warning is what a reader sees) and
    /// `Test.cancel`, which ends only the current case of a parameterized test.
    static func postgresURLOrSkip() throws -> String {
        guard let url = postgresURL else {
            Issue.record(postgresSkipped, severity: .warning)
            try Test.cancel(postgresSkipped)
        }
        return url
    }
}

/// A clock the test moves forward.
final class TestClock: Sendable {
    private let offset = Locked<Int64>(0)
    func advance(seconds: Int64) { offset.withLock { $0 += seconds } }
    /// Moves to the first second of the next fixed rate-limit window, so a test's attempts share one window.
    func alignToWindow(_ seconds: Int64) {
        let now = clock.now
        advance(seconds: seconds - now % seconds + 1)
    }
    var clock: ServerClock { skewed(by: 0) }
    /// How far the test has moved time: PostgreSQL's clock is moved by as much (``ServerConfiguration/databaseClockOffset``).
    var moved: Int64 { offset.withLock { $0 } }
    /// The test's clock for a process whose own clock is `skew` seconds off.
    func skewed(by skew: Int64) -> ServerClock {
        ServerClock { [self] in Int64(Date().timeIntervalSince1970) + moved + skew }
    }
}

/// Keeps every one-time code in memory, by flow id.
final class CapturingOTPSender: OTPSender {
    private let codes = Locked<[String: String]>([:])
    func send(_ message: OTPMessage) async throws { codes.withLock { $0[message.flowId] = message.codeText } }
    func code(flowId: String) -> String? { codes.withLock { $0[flowId] } }
}

/// One response.
struct APIResponse: Sendable {
    let status: Int
    let body: [UInt8]
    let headers: [(String, String)]

    var json: JSONValue? { try? StrictJSON.parse(body) }
    var text: String { String(decoding: body, as: UTF8.self) }
    /// `error.code` of an error body.
    var errorCode: String? {
        guard case .string(let code)? = json?["error"]?["code"] else { return nil }
        return code
    }
    func string(_ key: String) -> String? {
        guard case .string(let value)? = json?[key] else { return nil }
        return value
    }
}

/// One or more servers on ephemeral ports of 127.0.0.1 sharing one fresh database, and an HTTP client.
final class TestWorld: Sendable {
    let backend: TestBackend
    let servers: [RunningServer]
    let clock: TestClock
    let otp: CapturingOTPSender
    let webhookSecret: String
    let directory: String
    let database: ServerConfiguration.Database
    let masterKey: SecureBytes
    /// Checks every response against docs/openapi.yaml (off for deliberately unknown routes).
    let validatesAgainstSpec: Bool

    private init(
        backend: TestBackend, servers: [RunningServer], clock: TestClock, otp: CapturingOTPSender,
        webhookSecret: String,
        directory: String, database: ServerConfiguration.Database, masterKey: SecureBytes
    ) {
        self.backend = backend
        self.servers = servers
        self.clock = clock
        self.otp = otp
        self.webhookSecret = webhookSecret
        self.directory = directory
        self.database = database
        self.masterKey = masterKey
        validatesAgainstSpec = true
    }

    /// A fresh database for this test: an SQLite file in a new directory, or a new schema on PostgreSQL.
    static func freshDatabase(_ backend: TestBackend, directory: String) throws -> ServerConfiguration.Database {
        switch backend {
        case .sqlite: return .sqlite(path: directory + "/server.sqlite")
        case .postgres:
            let url = try TestBackend.postgresURLOrSkip()
            let schema = "t_" + Hex.encode(SystemRandom().bytes(count: 8))
            return .postgres(url: url + (url.contains("?") ? "&" : "?") + "schema=" + schema)
        }
    }

    /// A fresh migrated database of `backend`, storage only (no server), closed after `body`.
    static func withStorage(_ backend: TestBackend, _ body: (any ServerStorage) async throws -> Void) async throws {
        let directory = makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storage: any ServerStorage
        switch try freshDatabase(backend, directory: directory) {
        case .sqlite(let path): storage = try SQLiteStorage(path: path)
        case .postgres(let url):
            var logger = Logger(label: "storage-tests")
            logger.logLevel = .critical
            storage = PostgresStorage(location: try PostgresLocation(url: url), logger: logger)
        }
        do {
            try await storage.migrate()
            try await body(storage)
        } catch {
            await storage.close()
            throw error
        }
        await storage.close()
    }

    static func makeDirectory() -> String {
        let path =
            FileManager.default.temporaryDirectory.path + "/share-recovery-server-tests-"
            + Hex.encode(SystemRandom().bytes(count: 8))
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Starts `count` servers on one database; `configure` adjusts the configuration of each, and the
    /// process clock of server `i` runs `clockSkews[i]` seconds off (0 past the array's end).
    static func start(
        _ backend: TestBackend, servers count: Int = 1, clockSkews: [Int64] = [],
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> TestWorld {
        let directory = makeDirectory()
        let clock = TestClock()
        let otp = CapturingOTPSender()
        let secret = Hex.encode(SystemRandom().bytes(count: 24))
        let masterKey = SystemRandom().secureBytes(count: 32)
        let database: ServerConfiguration.Database
        do { database = try freshDatabase(backend, directory: directory) } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        var logger = Logger(label: "share-recovery-server-tests")
        logger.logLevel = .critical
        var servers: [RunningServer] = []
        for index in 0..<count {
            var configuration = ServerConfiguration(
                host: "127.0.0.1", port: 0, database: database, masterKey: .value(masterKey),
                webhookSecret: .value(SecureBytes(copying: Array(secret.utf8))), otpSender: otp, logger: logger)
            configuration.clock = clock.skewed(by: index < clockSkews.count ? clockSkews[index] : 0)
            configuration.databaseClockOffset = { clock.moved }
            // Each test's schema is new: its servers migrate it, as `serve --migrate` would.
            configuration.postgres.migrateAtStart = true
            configure(&configuration)
            servers.append(try await RunningServer.start(configuration))
        }
        return TestWorld(
            backend: backend, servers: servers, clock: clock, otp: otp, webhookSecret: secret, directory: directory,
            database: database, masterKey: masterKey)
    }

    /// Runs `body` with a started world and always stops it.
    static func with<R>(
        _ backend: TestBackend, servers: Int = 1, clockSkews: [Int64] = [],
        configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (TestWorld) async throws -> R
    ) async throws -> R {
        let world = try await start(backend, servers: servers, clockSkews: clockSkews, configure: configure)
        do {
            let result = try await body(world)
            await world.stop()
            return result
        } catch {
            await world.stop()
            throw error
        }
    }

    func stop() async {
        for server in servers { await server.stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: HTTP

    /// Sends a request to server `server` and checks the answer against the OpenAPI spec.
    @discardableResult
    func send(
        _ method: HTTPMethod, _ path: String, body: [UInt8]? = nil, headers: [(String, String)] = [], server: Int = 0,
        checkSpec: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> APIResponse {
        var request = HTTPClientRequest(url: servers[server % servers.count].baseURL() + path)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(60))
        let collected = try await response.body.collect(upTo: 32 * 1024 * 1024)
        let result = APIResponse(
            status: Int(response.status.code), body: Array(collected.readableBytesView),
            headers: response.headers.map { ($0.name, $0.value) })
        #expect(
            result.status < 500, "\(method) \(path) answered \(result.status): \(result.text)",
            sourceLocation: sourceLocation)
        if checkSpec {
            let problems = OpenAPISpec.shared.check(
                method: method.rawValue, path: path, status: result.status, body: result.body)
            #expect(problems.isEmpty, "\(problems)", sourceLocation: sourceLocation)
            SpecCoverage.shared.record(method: method.rawValue, path: path, status: result.status)
        }
        if result.status >= 400 {
            #expect(
                result.errorCode != nil, "error without {error: {code}}: \(result.text)", sourceLocation: sourceLocation
            )
        }
        return result
    }

    /// Sends a JSON body.
    @discardableResult
    func send(
        _ method: HTTPMethod, _ path: String, json: JSONValue, headers: [(String, String)] = [], server: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> APIResponse {
        try await send(
            method, path, body: Array(JSONWriter.write(json).utf8), headers: headers, server: server,
            sourceLocation: sourceLocation)
    }

    var webhookHeaders: [(String, String)] { [("X-Webhook-Secret", webhookSecret)] }
    func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    // MARK: Flows

    /// Creates a flow and returns its id (the code is captured by ``otp``).
    func createFlow(identifier: String, purpose: String = "recover", server: Int = 0) async throws -> String {
        let response = try await send(
            .POST, "/recovery/flows",
            json: .object([("identifier", .string(identifier)), ("purpose", .string(purpose))]),
            server: server)
        try #require(response.status == 201, "\(response.text)")
        return try #require(response.string("flowId"))
    }

    /// A token through a complete OTP flow.
    func token(for identifier: String, purpose: String, server: Int = 0) async throws -> String {
        let flowId = try await createFlow(identifier: identifier, purpose: purpose, server: server)
        let code = try #require(otp.code(flowId: flowId))
        let response = try await send(
            .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(code))]), server: server)
        try #require(response.status == 200, "\(response.text)")
        return try #require(response.string("token"))
    }

    // MARK: Database inspection

    /// A second connection to the test's database, for inspecting what the servers stored.
    func inspector() throws -> any ServerStorage {
        switch database {
        case .sqlite(let path): return try SQLiteStorage(path: path)
        case .postgres(let url):
            var logger = Logger(label: "inspector")
            logger.logLevel = .critical
            return PostgresStorage(location: try PostgresLocation(url: url), logger: logger)
        }
    }

    /// Every row of the tables that hold data (not counters), as text, for "nothing changed" checks.
    func snapshot() async throws -> [String] {
        let storage = try inspector()
        defer { Task { await storage.close() } }
        let queries = [
            "SELECT user_id, method, cipher_text FROM cipher_texts ORDER BY user_id, method",
            "SELECT client_id, method, curve, party_index, set_id, share_json FROM backup_shares ORDER BY client_id, method, curve, party_index",
            "SELECT client_id, party_index, set_id, generation, sealed_record FROM signing_shares ORDER BY client_id, party_index",
            "SELECT token_id FROM spent_tokens ORDER BY token_id",
            "SELECT id, protocol, state, sealed_state FROM protocol_sessions ORDER BY id",
        ]
        return try await storage.transaction { transaction in
            var lines: [String] = []
            for query in queries {
                for row in try await transaction.query(query, []) {
                    lines.append(
                        row.columns.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
                }
            }
            return lines
        }
    }
}

/// One HTTP client for every test, allowing many connections per server (the concurrency test uses 64).
enum TestHTTP {
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        // The tests play an integrator that sends its own `traceparent` (TracingTests), or none.
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}

/// Which (operation, status) pairs the tests have exercised.
final class SpecCoverage: Sendable {
    static let shared = SpecCoverage()
    private let seen = Locked<Set<String>>([])

    func record(method: String, path: String, status: Int) {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        guard let template = OpenAPISpec.shared.template(for: route) else { return }
        seen.withLock { _ = $0.insert("\(method) \(template) \(status)") }
    }

    var all: Set<String> { seen.withLock { $0 } }
}
