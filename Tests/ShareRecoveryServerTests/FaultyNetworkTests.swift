import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing
import TestSupport

@testable import ShareRecoveryServer

/// Retrying without fear, end to end (issue "Recovery a user can retry without fear", item 2): the
/// engine talks to the reference server through a proxy that resets connections, drops answers
/// after the server applied the request, and delays requests and answers past the client's attempt
/// timeout, at random from a printed seed. Every recovery, backup and method change still ends in
/// exactly one committed change on the server, and the device agrees with the custodian.
///
/// The server's integrator events of these operations go to a receiver through a faulty proxy too;
/// at the end of the run every one must have arrived, verified (EventArrivals).
///
/// 200 operations of each kind under CI (`CI=true`), shared by four wallets that run at once; 20
/// otherwise, on one wallet. SHARE_RECOVERY_FAULT_TRIALS overrides, SHARE_RECOVERY_FAULT_SEED replays a
/// run (wallet n's proxy draws from the run's seed + n).
@Suite("Faulty network", .serialized)
struct FaultyNetworkTests {
    static let environment = ProcessInfo.processInfo.environment
    static let trials =
        environment["SHARE_RECOVERY_FAULT_TRIALS"].flatMap { Int($0) } ?? (environment["CI"] == "true" ? 200 : 20)

    /// What the server has committed for the account: its confirmed resharing sessions by purpose, the
    /// custodian's signing set, and the methods with a cipherText.
    struct ServerState: Equatable, CustomStringConvertible {
        var confirmedBackups = 0
        var confirmedRecoveries = 0
        var signingSet = ""
        var generation: Int64 = -1
        var methods: [String] = []

        var description: String {
            "backups \(confirmedBackups), recoveries \(confirmedRecoveries), set \(signingSet) g\(generation), methods \(methods)"
        }

        static func read(_ world: TestWorld, clientId: String) async throws -> ServerState {
            let storage = try world.inspector()
            defer { Task { await storage.close() } }
            return try await storage.read { transaction in
                var state = ServerState()
                for row in try await transaction.query(
                    "SELECT public_json FROM protocol_sessions WHERE client_id = ? AND protocol = 'resharing' AND state = 'done'",
                    [.text(clientId)])
                {
                    switch try StrictJSON.parse(Array(try row.text("public_json").utf8))["purpose"] {
                    case .string("backup")?: state.confirmedBackups += 1
                    case .string("recovery")?: state.confirmedRecoveries += 1
                    default: break
                    }
                }
                if let row = try await transaction.query(
                    "SELECT set_id, generation FROM signing_shares WHERE client_id = ?", [.text(clientId)]
                ).first {
                    state.signingSet = try row.text("set_id")
                    state.generation = try row.integer("generation")
                }
                state.methods = try await transaction.query(
                    "SELECT method FROM cipher_texts WHERE user_id = ? ORDER BY method", [.text(clientId)]
                ).map { try $0.text("method") }
                return state
            }
        }
    }

    /// The engine's parts, every call through the proxy, with a retry policy that a fault cannot
    /// exhaust in practice: 12 attempts, 250 ms each, backoff from 5 ms.
    static func configuration(
        base: String, userId: String, store: any SigningShareStore, tokens: @escaping TokenProvider,
        webhookSecret: SecureBytes
    ) -> RecoveryEngine.Configuration {
        let transport = HTTPTransport(
            configuration: .init(
                timeout: .seconds(30), attemptTimeout: .milliseconds(250), maximumAttempts: 12,
                initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50)))
        return RecoveryEngine.Configuration(
            userId: userId, custodian: HTTPCustodian(baseURL: base, tokenProvider: tokens, transport: transport),
            shareStore: store,
            cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens, transport: transport),
            cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens, transport: transport),
            custodianBackupSink: HTTPCustodianBackupSink(
                webhookBaseURL: "\(base)/webhook", webhookSecret: webhookSecret, transport: transport),
            argon2: .minimum)
    }

    /// Runs one operation as an app would: again after a failure worth retrying (each attempt settles
    /// what the previous one left first). Returns how many attempts it took.
    static func withRetries(_ what: String, seed: UInt64, _ operation: () async throws -> Void) async throws -> Int {
        for attempt in 1...5 {
            do {
                try await operation()
                return attempt
            } catch {
                let failure = RecoveryFailure(error)
                guard failure.isRetryable, attempt < 5 else {
                    Issue.record("\(what) failed (seed \(seed)): \(error)")
                    throw error
                }
            }
        }
        return 5
    }

    /// Every backend at once: a trial spends about half its time waiting out faults (attempt timeouts,
    /// delays), so on 2 cores the backends' trials overlap instead of queueing.
    @Test(.timeLimit(.minutes(20)))
    func everyOperationCommitsOnce() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for backend in TestBackend.allCases {
                // One test for both backends: a missing database is a warning, not a cancel of the whole test.
                if backend == .postgres, TestBackend.postgresURL == nil {
                    Issue.record(TestBackend.postgresSkipped, severity: .warning)
                    continue
                }
                group.addTask { try await Self.everyOperationCommitsOnce(backend: backend) }
            }
            try await group.waitForAll()
        }
    }

    /// Wallets per backend that run their trials at once: 4 from 200 trials on (CI), each with its own
    /// user, proxy and share of the trials, so that one wallet's waits overlap another's work; one below.
    static var lanes: Int { max(1, min(4, trials / 50)) }

    static func everyOperationCommitsOnce(backend: TestBackend) async throws {
        let seed =
            Self.environment["SHARE_RECOVERY_FAULT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print(
            "FaultyNetworkTests: backend \(backend), \(Self.trials) trials on \(Self.lanes) wallets, seed \(seed) "
                + "(SHARE_RECOVERY_FAULT_SEED replays it)")
        // The server's integrator events go through a fault proxy of their own (seeded after the wallets').
        let eventsSeed = seed &+ UInt64(Self.lanes)
        try await EventArrivals.with(seed: eventsSeed) { events in
            try await TestWorld.with(
                backend,
                configure: {
                    WalletSessionTests.unlimitedFlows(&$0)
                    events.configure(&$0)
                }
            ) { world in
                let counts = try await withThrowingTaskGroup(of: [FaultProxy.Fault: Int].self) { group in
                    for lane in 0..<Self.lanes {
                        let trials = Self.trials / Self.lanes + (lane < Self.trials % Self.lanes ? 1 : 0)
                        group.addTask {
                            try await Self.runWallet(
                                trials: trials, lane: lane, seed: seed &+ UInt64(lane), backend: backend, world: world)
                        }
                    }
                    return try await group.reduce(into: [:]) { total, counts in
                        total.merge(counts, uniquingKeysWith: +)
                    }
                }
                // The faults really happened, of every kind.
                #expect(
                    FaultProxy.Fault.allCases.allSatisfy { counts[$0, default: 0] > 0 } || Self.trials < 20, "\(counts)"
                )
                try await Self.expectEveryEvent(events, world: world, backend: backend, seed: eventsSeed)
            }
        }
    }

    /// Every event of the trials arrived at the receiver (issue 39): verified, in commit order per wallet,
    /// duplicates only of the same webhook-id and body; one wait for the whole run, not one per trial.
    /// Each confirmed recovery announced itself once.
    static func expectEveryEvent(
        _ events: EventArrivals, world: TestWorld, backend: TestBackend, seed: UInt64
    ) async throws {
        let users = (0..<Self.lanes).map { "faulty-\(backend)-\($0)" }
        let started = Date()
        let outbox = try await events.expectEveryEventArrived(world, accounts: users)
        for user in users {
            let state = try await ServerState.read(world, clientId: user)
            let completed = outbox.filter { $0.event.account == user && $0.event.kind == .recoveryCompleted }
            #expect(completed.count == state.confirmedRecoveries, "\(user), events seed \(seed): \(state)")
        }
        let (requests, counts) = events.proxy.report
        print(
            "FaultyNetworkTests: backend \(backend), \(outbox.count) events verified by \(events.receiverName) "
                + String(format: "(%.1f s after the last trial)", Date().timeIntervalSince(started))
                + ", events seed \(seed): \(requests) requests, faults "
                + "\(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" })")
    }

    /// One wallet's trials through its own proxy (seeded with `seed`); returns the faults it met.
    static func runWallet(
        trials: Int, lane: Int, seed: UInt64, backend: TestBackend, world: TestWorld
    ) async throws -> [FaultProxy.Fault: Int] {
        let proxy = try FaultProxy(upstreamPort: world.servers[0].port, seed: seed)
        defer { proxy.stop() }
        let base = "http://127.0.0.1:\(proxy.port)"
        let user = "faulty-\(backend)-\(lane)"
        // Tokens come straight from the server: the flows are the test's plumbing, not under test.
        let tokens: TokenProvider = { purpose in try await world.token(for: user, purpose: purpose.rawValue) }
        let secret = SecureBytes(copying: Array(world.webhookSecret.utf8))
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-faulty-\(lane)")
        try await ReferenceServerClient(base: world.servers[0].baseURL())
            .registerCustodianShare(signing[1], clientId: user, webhookSecret: secret)
        var device = InMemorySigningShareStore(current: signing[0])
        func engine(_ store: InMemorySigningShareStore) -> RecoveryEngine {
            RecoveryEngine(
                configuration: Self.configuration(
                    base: base, userId: user, store: store, tokens: tokens, webhookSecret: secret))
        }
        let cloudKey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        let passkey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        proxy.setEnabled(false)
        try await engine(device).backup(method: .cloudKey, secret: cloudKey)
        proxy.setEnabled(true)

        var expected = try await ServerState.read(world, clientId: user)
        #expect(expected.confirmedBackups == 1 && expected.methods == [BackupMethod.cloudKey.name], "\(expected)")
        var attempts = 0
        for trial in 0..<trials {
            // A backup: the cloud key's backup set is replaced (one more confirmed backup session).
            attempts += try await Self.withRetries("backup \(trial)", seed: seed) {
                try await engine(device).backup(method: .cloudKey, secret: cloudKey)
            }
            expected.confirmedBackups += 1
            var state = try await ServerState.read(world, clientId: user)
            #expect(state.confirmedBackups == expected.confirmedBackups, "backup \(trial), seed \(seed): \(state)")

            // A recovery on a new device: exactly one generation more, and the device holds it.
            let newDevice = InMemorySigningShareStore()
            attempts += try await Self.withRetries("recovery \(trial)", seed: seed) {
                try await engine(newDevice).recover(method: .cloudKey, secret: cloudKey)
            }
            device = newDevice
            expected.confirmedRecoveries += 1
            state = try await ServerState.read(world, clientId: user)
            let current = try #require(await device.currentShare())
            #expect(
                state.confirmedRecoveries == expected.confirmedRecoveries, "recovery \(trial), seed \(seed): \(state)")
            #expect(
                state.generation == Int64(trial + 1) && Int64(current.generation) == state.generation,
                "seed \(seed): \(state)")
            #expect(state.signingSet == current.setId.hex, "seed \(seed): \(state)")
            #expect(current.publicKey == signing[0].publicKey)

            // A method change: passkey added on even trials (a backup of its own), deleted on odd ones.
            if trial % 2 == 0 {
                attempts += try await Self.withRetries("method add \(trial)", seed: seed) {
                    try await engine(device).addOrUpdateRecoveryMethod(.passkey, secret: passkey)
                }
                expected.confirmedBackups += 1
                expected.methods = [BackupMethod.cloudKey.name, BackupMethod.passkey.name]
            } else {
                attempts += try await Self.withRetries("method delete \(trial)", seed: seed) {
                    try await engine(device).deleteRecoveryMethod(.passkey)
                }
                expected.methods = [BackupMethod.cloudKey.name]
            }
            state = try await ServerState.read(world, clientId: user)
            #expect(
                state.confirmedBackups == expected.confirmedBackups, "method change \(trial), seed \(seed): \(state)")
            #expect(state.methods == expected.methods, "method change \(trial), seed \(seed): \(state)")
            #expect(await device.pendingSession() == nil)
            #expect(await device.stagedShare() == nil)
            if state != expected.with(signingSet: state.signingSet, generation: state.generation) { break }
        }
        let (requests, counts) = proxy.report
        print(
            "FaultyNetworkTests: backend \(backend), wallet \(lane), seed \(seed): \(3 * trials) operations in \(attempts) attempts, "
                + "\(requests) requests, faults \(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" })"
        )

        // Device and custodian agree: without faults, the wallet recovers once more from its backup.
        proxy.setEnabled(false)
        let last = InMemorySigningShareStore()
        let again = try await engine(last).recover(method: .cloudKey, secret: cloudKey)
        #expect(again.publicKey == signing[0].publicKey && Int(again.generation) == trials + 1)
        return counts
    }
}

extension FaultyNetworkTests.ServerState {
    fileprivate func with(signingSet: String, generation: Int64) -> Self {
        var copy = self
        copy.signingSet = signingSet
        copy.generation = generation
        return copy
    }
}
