import AsyncHTTPClient
import Foundation
import Histogram
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import ShareRecoveryServer

/// The reference server loaded over loopback by 64 concurrent connections (8 in a quick run, which
/// the test suite makes, under sanitizers too, to see that it works): requests/s, p50 and p99 of
/// cipherText GET, `/backup/fetch`, a whole recovery session and a whole signature with the custodian
/// (FROST, and ECDSA over a kept pair setup), against the same server's `/health`. On PostgreSQL the
/// load may be spread over several `serve` processes of one database (`processes`), as a fleet runs.
/// The server is `share-recovery serve` in a child process (`ServerProcess`); the load comes from
/// this one. On a 2-core machine the two share the CPU, so each phase also records the CPU each
/// process spent: a recovery session is held to a CPU floor built from them (`sessionFloor`).
struct ServerLoad {
    let quick: Bool
    let random: DeterministicRandom
    /// The cryptography one recovery session cannot avoid, both parties together, in ns of one core:
    /// `OperationCounts.serverSession` timed by the caller in the same run.
    let sessionCryptoNs: Double
    /// Only this workload (and `/health`), e.g. under a profiler; `nil`: all.
    var only: Kind? = nil
    /// How many `serve` processes share a PostgreSQL database, each connection sending to one of them
    /// in turn (SQLite: always one, as it is embedded in its process).
    var processes = 1

    var connections: Int { quick ? 8 : 64 }

    /// A recovery session's HTTP exchanges: cipherText GET, open, the server's own `/backup/fetch`
    /// call while it opens, finish, confirm.
    static let sessionExchanges = 5

    /// One database's figures: PostgreSQL at `postgresURL`, or (`nil`) SQLite in a fresh file.
    func run(postgresURL: String?) async throws -> [Measurement] {
        let count = postgresURL == nil ? 1 : processes
        let label = postgresURL == nil ? "SQLite" : count == 1 ? "PostgreSQL" : "PostgreSQL, \(count) processes"
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("recovery-bench-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let webhookSecret = SecureBytes(copying: Array(Hex.encode(random.bytes(count: 16)).utf8))
        let masterKey = random.secureBytes(count: 32)
        // One after the other: the first migrates the database, the others find it migrated.
        var servers: [ServerProcess] = []
        for index in 0..<count {
            let directory = index == 0 ? root : root + "/process-\(index)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            do {
                servers.append(
                    try ServerProcess.start(
                        database: postgresURL ?? root + "/server.sqlite",
                        files: ServerProcess.Files(directory: directory),
                        masterKey: masterKey, webhookSecret: webhookSecret))
            } catch {
                for server in servers { try? server.stop() }
                throw error
            }
        }
        let files = ServerProcess.Files(directory: root)
        var poolConfiguration = HTTPClient.Configuration()
        poolConfiguration.redirectConfiguration = .disallow
        // As `HTTPTransport.sharedClient`, what a device uses: the transport makes one span per call
        // itself, and the client's own tracing would add its per-request work to the load's CPU.
        poolConfiguration.tracing.tracer = nil
        poolConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: poolConfiguration)
        let outcome: Result<[Measurement], any Error>
        do {
            outcome = .success(
                try await measure(
                    bases: servers.map(\.baseURL), serverPids: servers.map(\.pid), client: client,
                    webhookSecret: webhookSecret, otpFile: files.otp, label: label))
        } catch {
            outcome = .failure(error)
        }
        try? await client.shutdown()
        let stopped = servers.map { server in Result { try server.stop() } }
        let results = try outcome.get()
        for result in stopped { try result.get() }
        return results
    }

    /// One user per connection: a wallet whose custodian share is registered, a cloudKey backup, and a
    /// `recover` token (read tokens are reusable until they expire).
    struct User: Sendable {
        /// The server process this connection sends to.
        let base: String
        let id: String
        let token: String
        let cipherText: String
        let secret: BackupSecret
        let deviceShare: ShareRecord
        /// A second user's device share of a DKG-made wallet with the server, and its `sign` token.
        let wallet: ShareRecord
        let walletUser: String
        let signToken: String
        /// The device's ECDSA pair setup with the custodian for `wallet` (when the ECDSA workload runs).
        let ecdsaSetup: PairSetup?
    }

    private func measure(
        bases: [String], serverPids: [Int32], client: HTTPClient, webhookSecret: SecureBytes, otpFile: String,
        label: String
    ) async throws -> [Measurement] {
        // A load of many connections, possibly under a sanitizer (the test suite's quick run): an answer
        // may take far longer than a device's 5 s attempt. Retried attempts would only add load and
        // meet their own first attempt still running (409 requestInProgress), so every call here
        // waits for its answer instead.
        let transport = HTTPTransport(
            configuration: .init(timeout: .seconds(600), attemptTimeout: .seconds(300), maximumAttempts: 2),
            client: client)
        // Every user is set up through the first process (whose OTP file the inbox reads); the load
        // then goes to each user's own.
        let base = bases[0]
        let server = ReferenceServerClient(base: base, transport: transport)
        let otp = OTPInbox(path: otpFile)
        let ecdsa = only == nil || only == .ecdsaSigning
        var users: [User] = []
        for index in 0..<connections {
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
            let walletUser = "bench-wallet-\(index)"
            let signToken = try await otp.token(server, identifier: walletUser, purpose: "sign")
            let walletClient = HTTPWalletClient(baseURL: base, tokenProvider: { _ in signToken }, transport: transport)
            let wallet = try await walletClient.createWallet(
                clientId: walletUser, walletId: "bench-\(index)", curve: .secp256k1, using: random)
            let setup = ecdsa ? try await walletClient.makePairSetup(share: wallet, clientId: walletUser) : nil
            users.append(
                User(
                    base: bases[index % bases.count], id: id, token: reader, cipherText: cipherText.base64,
                    secret: secret, deviceShare: signing[0], wallet: wallet, walletUser: walletUser,
                    signToken: signToken, ecdsaSetup: setup))
        }

        let rounds = quick ? 1 : 5
        let requests = quick ? 20 : 40
        let secretText = String(decoding: webhookSecret.revealedBytes(), as: UTF8.self)
        let every: [Workload] = [
            Workload(kind: .health, name: "/health (floor)", perConnection: requests) { user in
                try await Self.send(client, "GET", user.base + "/health")
            },
            Workload(kind: .cipherText, name: "cipherText GET", perConnection: requests) { user in
                try await Self.send(
                    client, "GET",
                    user.base + "/users/\(user.id)/user-backup-share?backupMethod=\(BackupMethod.cloudKey.apiName)",
                    headers: [("Authorization", "Bearer " + user.token)])
            },
            Workload(kind: .fetch, name: "/backup/fetch", perConnection: requests) { user in
                try await Self.send(
                    client, "POST", user.base + "/webhook/backup/fetch", headers: [("X-Webhook-Secret", secretText)],
                    body: JSONWriter.write(.object([("clientId", .string(user.id))])))
            },
            Workload(kind: .session, name: "full recovery session (cloudKey, 2-of-2)", perConnection: 1) { user in
                let engine = RecoveryEngine(
                    configuration: ReferenceServerClient(base: user.base, transport: transport).engineConfiguration(
                        userId: user.id, store: InMemorySigningShareStore(current: user.deviceShare),
                        tokens: { _ in user.token }, webhookSecret: nil))
                _ = try await engine.recover(method: .cloudKey, secret: user.secret)
            },
            Workload(kind: .signing, name: "signing session (bip340, 2-of-2)", perConnection: 4) { user in
                let wallet = HTTPWalletClient(
                    baseURL: user.base, tokenProvider: { _ in user.signToken }, transport: transport)
                _ = try await wallet.sign(share: user.wallet, clientId: user.walletUser, message: Array(user.id.utf8))
            },
            Workload(kind: .ecdsaSigning, name: "ECDSA signing session (DKLs23, 2-of-2)", perConnection: 2) { user in
                guard let setup = user.ecdsaSetup else { throw BenchError("no ECDSA pair setup was made") }
                let wallet = HTTPWalletClient(
                    baseURL: user.base, tokenProvider: { _ in user.signToken }, transport: transport)
                _ = try await wallet.signECDSA(
                    share: user.wallet, setup: setup, clientId: user.walletUser,
                    digest: Keccak256.hash(Array(user.id.utf8)))
            },
        ]
        // `/health` always runs: it is the others' floor.
        let workloads = every.filter { $0.kind == .health || only == nil || only == $0.kind }
        // Warm-up: every connection is opened, every statement prepared, before timing starts.
        for workload in workloads { _ = try await phase(workload, users: users, serverPids: serverPids) }
        // Rounds of every workload in turn, so each sees the same machine (this VM drifts by tens of
        // percent within a minute): their figures are sums over the rounds.
        var latencies = Array(repeating: [UInt64](), count: workloads.count)
        var wall = Array(repeating: 0.0, count: workloads.count)
        var cpu = Array(repeating: PhaseCPU(), count: workloads.count)
        for _ in 0..<rounds {
            for (index, workload) in workloads.enumerated() {
                let phase = try await phase(workload, users: users, serverPids: serverPids)
                latencies[index] += phase.latencies
                wall[index] += phase.seconds
                cpu[index].server += phase.cpu.server
                cpu[index].load += phase.cpu.load
            }
        }
        var results: [Measurement] = []
        for (index, workload) in workloads.enumerated() {
            var measurement = Self.measurement(
                group: "server \(label)", name: "\(workload.name), \(connections) connections",
                latencies: latencies[index],
                seconds: wall[index])
            let requests = Double(max(latencies[index].count, 1))
            measurement.serverCPUNs = cpu[index].server * 1e9 / requests
            measurement.loadCPUNs = cpu[index].load * 1e9 / requests
            if workload.kind == .session, let health = results.first {
                let floor = sessionFloor(health: health)
                measurement.floorNs = Double(measurement.medianNs) * (measurement.throughput ?? 0) / floor.perSecond
                measurement.target = 2.0
                measurement.note = String(
                    format:
                        "CPU floor: %.0f sessions/s = %d cores / (%.1f µs of cryptography + %d exchanges × %.1f µs, the CPU of one /health exchange in the same rounds, server and load); target: ≥ 50%% of it, i.e. this ratio ≤ 2; a session is cipherText GET, open (webhook /backup/fetch, selection), finish, confirm",
                    floor.perSecond, floor.cores, sessionCryptoNs / 1000, Self.sessionExchanges, floor.exchangeNs / 1000
                )
            } else if workload.kind != .health, let health = results.first {
                measurement.floorNs = health.throughputFloor(for: measurement)
                measurement.note = "floor: /health in the same rounds (ratio of throughputs)"
                if workload.kind == .cipherText {
                    measurement.target = 2.0
                    measurement.note += "; target: throughput ≥ 0.5× /health's, i.e. this ratio ≤ 2"
                }
            }
            measurement.note += String(
                format: "%@CPU per operation: server %.1f µs, load %.1f µs", measurement.note.isEmpty ? "" : "; ",
                (measurement.serverCPUNs ?? 0) / 1000, (measurement.loadCPUNs ?? 0) / 1000)
            if workload.kind == .signing {
                measurement.note +=
                    "; a signature is two requests (commitment, signature share) and the device's FROST work"
            }
            if workload.kind == .ecdsaSigning {
                measurement.note +=
                    "; a signature is three requests (rounds 1, 2, 3) over the kept pair setup and the device's DKLs23 work"
            }
            if bases.count > 1 {
                measurement.note += "; server CPU summed over the \(bases.count) processes"
            }
            FileHandle.standardError.write(
                Data(
                    String(
                        format: "  %@ / %@: %.0f per second\n", measurement.group, measurement.name,
                        measurement.throughput ?? 0
                    ).utf8))
            results.append(measurement)
        }
        return results
    }

    /// One kind of request and how many each connection makes per round.
    struct Workload: Sendable {
        let kind: Kind
        let name: String
        let perConnection: Int
        let body: @Sendable (User) async throws -> Void
    }

    /// The workloads, by the names `--server-workload` takes.
    enum Kind: String, Sendable, CaseIterable {
        case health, cipherText = "cipher-text", fetch, session, signing, ecdsaSigning = "ecdsa-signing"
    }

    /// CPU seconds the server and this process (the load) spent in one phase.
    struct PhaseCPU {
        var server = 0.0
        var load = 0.0
    }

    /// The most sessions per second the machine's cores could run if a session cost only the CPU it
    /// cannot avoid: its cryptography, and its exchanges at the price of the cheapest one the server
    /// answers (`/health`, both processes' CPU per request, measured in the same rounds). Database
    /// work is left out, so the floor is a bound no server reaches.
    func sessionFloor(health: Measurement) -> (perSecond: Double, cores: Int, exchangeNs: Double) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let exchangeNs = (health.serverCPUNs ?? 0) + (health.loadCPUNs ?? 0)
        let sessionNs = sessionCryptoNs + Double(Self.sessionExchanges) * exchangeNs
        return (Double(cores) * 1e9 / max(sessionNs, 1), cores, exchangeNs)
    }

    /// Every connection makes its requests at once; returns each request's latency, the wall time and
    /// the CPU both processes spent.
    private func phase(_ workload: Workload, users: [User], serverPids: [Int32]) async throws
        -> (latencies: [UInt64], seconds: Double, cpu: PhaseCPU)
    {
        func serverCPU() -> Double { serverPids.reduce(0) { $0 + CPUTime.seconds(of: $1) } }
        let serverBefore = serverCPU(), loadBefore = CPUTime.seconds(of: getpid())
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [UInt64].self) { tasks in
            for user in users {
                tasks.addTask {
                    var own: [UInt64] = []
                    own.reserveCapacity(workload.perConnection)
                    for _ in 0..<workload.perConnection {
                        let begin = ContinuousClock.now
                        try await workload.body(user)
                        own.append(Self.nanoseconds(begin.duration(to: .now)))
                    }
                    return own
                }
            }
            var all: [UInt64] = []
            for try await own in tasks { all += own }
            return all
        }
        let seconds = Double(Self.nanoseconds(start.duration(to: .now))) / 1e9
        let cpu = PhaseCPU(
            server: serverCPU() - serverBefore, load: CPUTime.seconds(of: getpid()) - loadBefore)
        return (latencies, seconds, cpu)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
    }

    static func measurement(group: String, name: String, latencies: [UInt64], seconds: Double) -> Measurement {
        var histogram = Timer.histogram()
        for latency in latencies { _ = histogram.record(max(latency, 1)) }
        var measurement = Measurement(
            group: group, name: name, iterations: latencies.count, medianNs: histogram.median,
            p99Ns: histogram.valueAtPercentile(99),
            meanNs: Double(latencies.reduce(0, +)) / Double(max(latencies.count, 1)))
        measurement.throughput = Double(latencies.count) / max(seconds, 1e-9)
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
            throw TransportError(
                .requestRejected, "\(method) \(url): HTTP \(response.status.code) in the benchmark",
                status: Int(response.status.code))
        }
        return bytes
    }
}

extension Measurement {
    /// The time one request of `other` would take if it ran at this (floor) measurement's throughput:
    /// the ratio to it is then floor throughput / measured throughput.
    func throughputFloor(for other: Measurement) -> Double? {
        guard let floorThroughput = throughput, let measured = other.throughput, floorThroughput > 0, measured > 0
        else {
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
        let token = try await server.verifyFlow(
            flowId: flowId, code: try FileOTPSender(path: path).code(flowId: flowId))
        return String(decoding: token.revealedBytes(), as: UTF8.self)
    }
}
