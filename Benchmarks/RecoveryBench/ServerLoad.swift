import AsyncHTTPClient
import Foundation
import Histogram
import Logging
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import ShareRecoveryServer
import Synchronization

/// The reference server loaded over loopback by 64 concurrent connections: requests/s, p50 and p99 of
/// cipherText GET, `/backup/fetch` and a whole recovery session, against the same server's `/health`.
/// The clients run in this process, so on a 2-core machine they share the CPU with the server: the
/// figures are for the pair, and `/health` measured the same way is the floor.
struct ServerLoad {
    static let connections = 64

    let quick: Bool
    let random: DeterministicRandom

    /// One database's figures; `label` is "SQLite" or "PostgreSQL".
    func run(database: ServerConfiguration.Database, label: String) async throws -> [Measurement] {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        var logger = Logger(label: "recovery-bench-server")
        logger.logLevel = .critical
        let webhookSecret = SecureBytes(copying: Array(Hex.encode(random.bytes(count: 16)).utf8))
        let unlimited = ServerConfiguration.RateLimit(limit: 1_000_000, windowSeconds: 900)
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, database: database, masterKey: .value(random.secureBytes(count: 32)),
            webhookSecret: .value(webhookSecret), otpSender: FileOTPSender(path: "\(root)/otp.jsonl"),
            // The bench asks for tokens far faster than people would; the limits are not what it measures.
            rateLimits: .init(
                verifyPerIdentifier: unlimited, verifyPerAddress: unlimited, flowCreationPerIdentifier: unlimited,
                flowCreationPerAddress: unlimited),
            logger: logger)
        let server = try await RunningServer.start(configuration)
        var poolConfiguration = HTTPClient.Configuration()
        poolConfiguration.redirectConfiguration = .disallow
        poolConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: Self.connections)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: poolConfiguration)
        let outcome: Result<[Measurement], any Error>
        do {
            outcome = .success(
                try await measure(
                    base: server.baseURL(), client: client, webhookSecret: webhookSecret, otpFile: "\(root)/otp.jsonl",
                    label: label))
        } catch {
            outcome = .failure(error)
        }
        try? await client.shutdown()
        await server.stop()
        return try outcome.get()
    }

    /// One user per connection: a wallet whose custodian share is registered, a cloudKey backup, and a
    /// `recover` token (read tokens are reusable until they expire).
    struct User: Sendable {
        let id: String
        let token: String
        let cipherText: String
        let secret: BackupSecret
        let deviceShare: ShareRecord
    }

    private func measure(base: String, client: HTTPClient, webhookSecret: SecureBytes, otpFile: String, label: String)
        async throws -> [Measurement]
    {
        let server = ReferenceServerClient(base: base, client: client)
        let otp = OTPInbox(path: otpFile)
        var users: [User] = []
        for index in 0..<Self.connections {
            let id = "bench-user-\(index)"
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "bench-\(index)", using: random)
            try await server.registerCustodianShare(signing[1], clientId: id, webhookSecret: webhookSecret)
            let writer = try await otp.token(server, identifier: id, purpose: "addOrUpdateRecovery")
            let secret = BackupSecret.keyMaterial(random.secureBytes(count: 32))
            let engine = RecoveryEngine(
                configuration: server.engineConfiguration(
                    userId: id, store: InMemorySigningShareStore(current: signing[0]), tokens: { _ in writer },
                    webhookSecret: webhookSecret))
            let cipherText = try await engine.backup(method: .cloudKey, secret: secret)
            let reader = try await otp.token(server, identifier: id, purpose: "recover")
            users.append(User(id: id, token: reader, cipherText: cipherText.base64, secret: secret, deviceShare: signing[0]))
        }

        let requests = quick ? 20 : 200
        let sessions = quick ? 1 : 5
        let group = "server \(label)"
        let health = try await load(group, "/health (floor)", perConnection: requests, users: users) { _ in
            try await Self.send(client, "GET", base + "/health")
        }
        var results = [health]
        var get = try await load(group, "cipherText GET", perConnection: requests, users: users) { user in
            try await Self.send(
                client, "GET", base + "/users/\(user.id)/user-backup-share?backupMethod=\(BackupMethod.cloudKey.apiName)",
                headers: [("Authorization", "Bearer " + user.token)])
        }
        get.floorNs = health.throughputFloor(for: get)
        get.target = 2.0
        get.note = "floor: /health at the same load; the target is throughput ≥ 0.5× /health's, i.e. this ratio ≤ 2"
        results.append(get)
        let secretText = String(decoding: webhookSecret.revealedBytes(), as: UTF8.self)
        var fetch = try await load(group, "/backup/fetch", perConnection: requests, users: users) { user in
            try await Self.send(
                client, "POST", base + "/webhook/backup/fetch", headers: [("X-Webhook-Secret", secretText)],
                body: JSONWriter.write(.object([("clientId", .string(user.id))])))
        }
        fetch.floorNs = health.throughputFloor(for: fetch)
        fetch.note = "floor: /health at the same load (ratio of throughputs)"
        results.append(fetch)
        var session = try await load(group, "full recovery session (cloudKey, 2-of-2)", perConnection: sessions, users: users) {
            user in
            let engine = RecoveryEngine(
                configuration: server.engineConfiguration(
                    userId: user.id, store: InMemorySigningShareStore(current: user.deviceShare),
                    tokens: { _ in user.token }, webhookSecret: nil))
            _ = try await engine.recover(method: .cloudKey, secret: user.secret)
        }
        session.floorNs = health.throughputFloor(for: session)
        session.note = "cipherText GET + session open (webhook /backup/fetch, selection) + finish + confirm; ratio of throughputs to /health"
        results.append(session)
        return results
    }

    /// Runs `body` `perConnection` times on each of the 64 connections at once.
    private func load(
        _ group: String, _ name: String, perConnection: Int, users: [User], _ body: @escaping @Sendable (User) async throws -> Void
    ) async throws -> Measurement {
        // Warm-up: every connection is opened before timing starts.
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for user in users { tasks.addTask { try await body(user) } }
            try await tasks.waitForAll()
        }
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [UInt64].self) { tasks in
            for user in users {
                tasks.addTask {
                    var own: [UInt64] = []
                    own.reserveCapacity(perConnection)
                    for _ in 0..<perConnection {
                        let begin = ContinuousClock.now
                        try await body(user)
                        let elapsed = begin.duration(to: .now)
                        own.append(UInt64(elapsed.components.seconds) * 1_000_000_000 + UInt64(elapsed.components.attoseconds / 1_000_000_000))
                    }
                    return own
                }
            }
            var all: [UInt64] = []
            for try await own in tasks { all += own }
            return all
        }
        let wall = start.duration(to: .now)
        let wallNs = Double(wall.components.seconds) * 1e9 + Double(wall.components.attoseconds) / 1e9
        var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000_000, numberOfSignificantValueDigits: .three)
        for latency in latencies { _ = histogram.record(max(latency, 1)) }
        var measurement = Measurement(
            group: group, name: "\(name), \(Self.connections) connections", iterations: latencies.count,
            medianNs: histogram.median, p99Ns: histogram.valueAtPercentile(99),
            meanNs: Double(latencies.reduce(0, +)) / Double(max(latencies.count, 1)))
        measurement.throughput = Double(latencies.count) / (wallNs / 1e9)
        FileHandle.standardError.write(
            Data(String(format: "  %@ / %@: %.0f requests/s\n", group, measurement.name, measurement.throughput ?? 0).utf8))
        return measurement
    }

    /// One request; anything but 2xx stops the bench (a benchmark of errors would measure nothing).
    @discardableResult
    static func send(
        _ client: HTTPClient, _ method: String, _ url: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: url)
        request.method = .RAW(value: method)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw ShareRecoveryError(.requestRejected, "\(method) \(url): HTTP \(response.status.code) in the benchmark")
        }
        return bytes
    }
}

extension Measurement {
    /// The time one request of `other` would take if it ran at this (floor) measurement's throughput:
    /// the ratio to it is then floor throughput / measured throughput.
    func throughputFloor(for other: Measurement) -> Double? {
        guard let floorThroughput = throughput, let measured = other.throughput, floorThroughput > 0, measured > 0 else {
            return nil
        }
        return Double(other.medianNs) * measured / floorThroughput
    }
}

/// Tokens through OTP flows, reading codes from the server's file sender as a user reads their inbox.
struct OTPInbox: Sendable {
    let path: String

    func token(_ server: ReferenceServerClient, identifier: String, purpose: String) async throws -> String {
        let flowId = try await server.startFlow(identifier: identifier, purpose: purpose)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for line in text.split(separator: "\n").reversed() {
            guard case .object(let fields) = try StrictJSON.parse(String(line)),
                case .string(flowId)? = fields.first(where: { $0.key == "flowId" })?.value,
                case .string(let code)? = fields.first(where: { $0.key == "code" })?.value
            else { continue }
            let token = try await server.verifyFlow(flowId: flowId, code: SecureBytes(copying: Array(code.utf8)))
            return String(decoding: token.revealedBytes(), as: UTF8.self)
        }
        throw ShareRecoveryError(.notFound, "no one-time code for flow \(flowId)")
    }
}
