import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing
import TestSupport

@testable import ShareRecoveryServer

/// Integrator events: the outbox written with the audited change, and its delivery signed per
/// Standard Webhooks, in order per account, retried, dead-lettered and redelivered.
@Suite("Integrator events")
struct EventsTests {
    /// A fresh `whsec_` secret file's text and its signer.
    static func secret() throws -> (text: String, signer: StandardWebhooksSigner) {
        let text = "whsec_" + Base64.encode(SystemRandom().bytes(count: 32))
        return (text, try StandardWebhooksSigner(secretText: SecureBytes(copying: Array(text.utf8)), source: "test"))
    }

    static func worker(
        _ storage: any ServerStorage, url: String, signer: StandardWebhooksSigner, maximumAttempts: Int = 3,
        metrics: ServerMetrics = ServerMetrics(), configure: (inout EventsConfiguration) -> Void = { _ in }
    ) -> EventDelivery {
        var configuration = EventsConfiguration(url: url, secretFile: "unused", maximumAttempts: maximumAttempts)
        configuration.initialBackoffMilliseconds = 1_000
        configure(&configuration)
        var logger = Logger(label: "events-tests")
        logger.logLevel = .critical
        return EventDelivery(
            storage: storage, configuration: configuration, signer: signer, metrics: metrics, logger: logger)
    }

    static func event(_ kind: AuditEventKind, _ account: String, _ request: String) -> AuditEvent {
        AuditEvent(kind, account: account, requestId: request, at: 1_800_000_000)
    }

    @Test("the signature is the Standard Webhooks specification's own example")
    func specificationExample() throws {
        // The example of the specification (standard-webhooks, spec/standard-webhooks.md): made by
        // its authors' implementation, not by this code.
        let signer = try StandardWebhooksSigner(
            secretText: SecureBytes(copying: Array("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n".utf8)), source: "test")
        let body = #"{"test": 2432232314}"#
        #expect(
            signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(
            signer.verifies(
                header: "v1,bm90IGl0 v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
                id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
                timestamp: 1_614_265_330, body: body))
        #expect(
            !signer.verifies(
                header: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
                timestamp: 1_614_265_331, body: body))
    }

    @Test("the secret file: one whsec_ secret per line, the first signs and every one verifies")
    func secretFile() throws {
        let (first, firstSigner) = try Self.secret()
        let (second, secondSigner) = try Self.secret()
        let both = try StandardWebhooksSigner(
            secretText: SecureBytes(copying: Array("\(first)\r\n\n\(second)\n".utf8)), source: "f")
        let signed = both.signature(id: "evt_1", timestamp: 5, body: "{}")
        #expect(signed == firstSigner.signature(id: "evt_1", timestamp: 5, body: "{}"))
        let old = secondSigner.signature(id: "evt_1", timestamp: 5, body: "{}")
        #expect(both.verifies(header: old, id: "evt_1", timestamp: 5, body: "{}"))
        #expect(!firstSigner.verifies(header: old, id: "evt_1", timestamp: 5, body: "{}"))
        for bad in ["", "\n\n", "secret\n", "whsec_!!!!\n", "whsec_" + Base64.encode([UInt8](repeating: 1, count: 16))]
        {
            #expect(throws: ServerStartError(.invalidConfiguration, "")) {
                try StandardWebhooksSigner(secretText: SecureBytes(copying: Array(bad.utf8)), source: "f")
            }
        }
    }

    @Test("the outbox migration copies exactly the audit kinds that are announced")
    func kindsFrozen() {
        #expect(Migrations.announcedAuditKinds == IntegratorEventKind.allCases.map(\.auditKind.rawValue))
        #expect(Migrations.ecdsaEventOutboxAuditKinds.starts(with: Migrations.eventOutboxAuditKinds))
        #expect(Set(IntegratorEventKind.allCases.map(\.auditKind)).count == IntegratorEventKind.allCases.count)
    }

    @Test(
        "an event is in the outbox exactly when its audited change committed, announced kinds only",
        arguments: TestBackend.allCases)
    func outboxFollowsTheChange(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            try await storage.recordAudit(
                Self.event(.methodAdded, "alice", "r1"), Self.event(.cipherTextRead, "alice", "r2"),
                Self.event(.otpExhausted, "bob", "r3"))
            // A change that fails after its audit row is appended leaves neither the change nor the event.
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await storage.transaction { transaction in
                    try await transaction.query(
                        "INSERT INTO cipher_texts (user_id, method, cipher_text, updated_at) VALUES (?, ?, ?, ?)",
                        .text("carol"), .text("password"), .text("x"), .integer(1))
                    try await type(of: storage).appendAudit([Self.event(.methodAdded, "carol", "r4")], in: transaction)
                    throw Refused()
                }
            }
            let entries = try await storage.outboxEntries(state: nil, account: nil, after: 0, limit: 10)
            #expect(entries.map(\.event.kind) == [.recoveryMethodAdded, .otpFlowExhausted])
            #expect(entries.map(\.event.account) == ["alice", "bob"])
            #expect(entries.map(\.event.requestId) == ["r1", "r3"])
            #expect(entries.allSatisfy { $0.state == .pending && $0.attempts == 0 })
            #expect(Set(entries.map(\.event.id)).count == 2 && entries.allSatisfy { $0.event.id.count == 36 })
            let carol = try await storage.read { try await $0.query("SELECT user_id FROM cipher_texts", []) }
            #expect(carol.isEmpty)
        }
    }

    @Test(
        "delivery: signed, in order per account, retried, dead after its attempts without holding back the rest, redelivered",
        arguments: TestBackend.allCases)
    func retryDeadAndRedeliver(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let (_, signer) = try Self.secret()
            let receiver = EventReceiver(signer: signer)
            try await receiver.run { url in
                let metrics = ServerMetrics()
                let worker = Self.worker(storage, url: url, signer: signer, maximumAttempts: 2, metrics: metrics)
                try await storage.recordAudit(
                    Self.event(.recoveryStarted, "a", "a1"), Self.event(.walletCreated, "b", "b1"),
                    Self.event(.recoveryCompleted, "a", "a2"))
                // Account a's receiver is down; b's event goes through meanwhile.
                receiver.answer { $0.account == "a" ? 503 : 204 }
                let now = EventDelivery.nowMilliseconds
                #expect(try await worker.deliverDue(now: now) == 2)
                // a1 waits for its backoff and a2 behind it: nothing is due.
                #expect(try await worker.deliverDue(now: now) == 0)
                let later = now + 3_600_000
                #expect(try await worker.deliverDue(now: later) == 1)  // a1's second and last attempt
                let dead = try await storage.outboxEntries(state: .dead, account: nil, after: 0, limit: 10)
                #expect(dead.map(\.event.requestId) == ["a1"] && dead.first?.attempts == 2)
                #expect(dead.first?.lastError == "HTTP 503")
                // The dead event holds back none of a's later ones.
                receiver.answer { _ in 204 }
                #expect(try await worker.deliverDue(now: later) == 1)
                #expect(receiver.taken.map(\.json?["requestId"]) == [.string("b1"), .string("a2")])

                let page = try await EventOutbox.redeliver(storage, ids: nil)
                #expect(page["redelivered"] == .array(dead.map { .string($0.event.id) }))
                #expect(try await worker.deliverDue(now: later) == 1)
                let all = receiver.deliveries
                #expect(all.allSatisfy { $0.verified })
                // Every attempt of a1 carried the same id and body.
                let a1 = all.filter { $0.id == dead.first?.event.id }
                #expect(a1.count == 3 && Set(a1.map(\.body)).count == 1)
                #expect(receiver.taken.map(\.json?["requestId"]) == [.string("b1"), .string("a2"), .string("a1")])
                let delivered = try await storage.outboxEntries(state: .delivered, account: nil, after: 0, limit: 10)
                #expect(delivered.count == 3)
                let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
                #expect(exposition.contains("share_recovery_events_delivered_total 3"))
                #expect(exposition.contains("share_recovery_events_dead_total 1"))
                // An id that is not delivered or dead re-queues nothing.
                await #expect(throws: ShareRecoveryError(.notFound, "")) {
                    _ = try await EventOutbox.redeliver(storage, ids: ["evt_none"])
                }
            }
        }
    }

    @Test("the body: id, type, timestamp, account, request id and the audit row's public details")
    func body() throws {
        let event = IntegratorEvent(
            id: "evt_00112233445566778899aabbccddeeff", sequence: 7, kind: .deviceRemoved, account: "u\"1",
            at: 1_800_000_000, requestId: "req-9", detail: #"{"walletId":"w1","deviceId":"d2"}"#)
        #expect(
            event.body
                == #"{"id":"evt_00112233445566778899aabbccddeeff","type":"device.removed","timestamp":"2027-01-15T08:00:00Z","account":"u\"1","requestId":"req-9","data":{"walletId":"w1","deviceId":"d2"}}"#
        )
        #expect(OpenAPISpec.shared.checkEvent(body: Array(event.body.utf8)).isEmpty)
    }

    @Test("two workers on one database deliver each event once, in order per account", arguments: TestBackend.allCases)
    func twoWorkers(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let (_, signer) = try Self.secret()
            let receiver = EventReceiver(signer: signer)
            let accounts = (0..<6).map { "user-\($0)" }
            for round in 0..<5 {
                try await storage.recordAudit(
                    accounts.map { Self.event(.deviceAdded, $0, "\($0)-\(round)") })
            }
            try await receiver.run { url in
                let workers = [
                    Self.worker(storage, url: url, signer: signer), Self.worker(storage, url: url, signer: signer),
                ]
                let deadline = Date().addingTimeInterval(20)
                await withTaskGroup(of: Void.self) { group in
                    for worker in workers {
                        group.addTask {
                            while receiver.deliveries.count < 30, Date() < deadline {
                                if (try? await worker.deliverDue(now: EventDelivery.nowMilliseconds)) == 0 {
                                    try? await Task.sleep(for: .milliseconds(5))
                                }
                            }
                        }
                    }
                }
            }
            let deliveries = receiver.deliveries
            #expect(deliveries.count == 30 && Set(deliveries.map(\.id)).count == 30)
            #expect(deliveries.allSatisfy { $0.verified })
            for account in accounts {
                let requests = deliveries.filter { $0.account == account }.map(\.json?["requestId"])
                #expect(requests == (0..<5).map { .string("\(account)-\($0)") })
            }
        }
    }

    @Test("a claim whose worker died is taken over once its lease runs out", arguments: TestBackend.allCases)
    func leaseTakeover(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let (_, signer) = try Self.secret()
            let receiver = EventReceiver(signer: signer)
            try await storage.recordAudit(Self.event(.walletEjected, "gone", "r1"))
            let now = EventDelivery.nowMilliseconds
            let claimed = try await storage.claimEvents(worker: "killed", now: now, lease: 60_000, limit: 10)
            #expect(claimed.count == 1)
            try await receiver.run { url in
                let worker = Self.worker(storage, url: url, signer: signer)
                let early = try await worker.deliverDue(now: now + 59_000)
                let late = try await worker.deliverDue(now: now + 60_000)
                #expect(early == 0 && late == 1)
            }
            #expect(receiver.taken.map(\.id) == claimed.map(\.event.id))
        }
    }

    /// Writes a fresh `whsec_` secret file into `directory`.
    static func secretFile(in directory: String) throws -> (path: String, text: String, signer: StandardWebhooksSigner)
    {
        let (text, signer) = try secret()
        let path = directory + "/events.secrets"
        try (text + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (path, text, signer)
    }

    @Test(
        "a server delivers its events within moments, in commit order, verified, with nothing secret in them",
        arguments: TestBackend.allCases)
    func serverDelivers(backend: TestBackend) async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (secretPath, secretText, signer) = try Self.secretFile(in: directory)
        let receiver = EventReceiver(signer: signer)
        let scrapeToken = "events scrape token, 16+ bytes"
        try await receiver.run { url in
            try await TestWorld.with(
                backend,
                configure: {
                    $0.events = EventsConfiguration(url: url, secretFile: secretPath)
                    $0.events?.pollMilliseconds = 20
                    $0.metricsToken = .value(SecureBytes(copying: Array(scrapeToken.utf8)))
                }
            ) { world in
                let user = "events-\(Hex.encode(SystemRandom().bytes(count: 4)))"
                let path = "/users/\(user)/user-backup-share?backupMethod=PASSWORD"
                let text = try Fixtures.cipherText(method: .password)
                var secrets = [text, secretText, String(secretText.dropFirst(6)), world.webhookSecret, scrapeToken]
                secrets.append(world.masterKey.withUnsafeBytes { Hex.encode($0) })
                var requestIds: [String] = []
                for (index, method) in [HTTPMethod.PUT, .PUT, .DELETE].enumerated() {
                    let token = try await world.token(
                        for: user, purpose: method == .DELETE ? "deleteRecovery" : "addOrUpdateRecovery")
                    secrets.append(token)
                    let requestId = "events-test-\(index)"
                    let body =
                        method == .DELETE ? nil : Array(JSONWriter.write(.object([("cipherText", .string(text))])).utf8)
                    let response = try await world.send(
                        method, path, body: body, headers: world.bearer(token) + [("X-Request-Id", requestId)])
                    #expect(response.status == 204, "\(response.text)")
                    requestIds.append(requestId)
                }
                let flowId = try await world.createFlow(identifier: user, purpose: "addOrUpdateRecovery")
                let code = try #require(world.otp.code(flowId: flowId))
                secrets.append(code)
                let wrong = String(format: "%06d", (Int(code)! + 1) % 1_000_000)
                for _ in 1...5 {
                    try await world.send(
                        .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(wrong))]))
                }
                // Delivered within moments of the commits (the worker polls every 20 ms here).
                #expect(try await receiver.wait(seconds: 5) { $0.count >= 4 })
                let deliveries = receiver.deliveries
                #expect(
                    deliveries.map(\.type) == [
                        "recoveryMethod.added", "recoveryMethod.rotated", "recoveryMethod.deleted", "otpFlow.exhausted",
                    ])
                #expect(deliveries.prefix(3).map { $0.json?["requestId"] } == requestIds.map { .string($0) })
                #expect(deliveries.allSatisfy { $0.verified && $0.account == user })
                #expect(deliveries.allSatisfy { OpenAPISpec.shared.checkEvent(body: Array($0.body.utf8)).isEmpty })
                let serialized = deliveries.map { "\($0.id) \($0.timestamp) \($0.signature) \($0.body)" }
                    .joined(separator: "\n")
                for secret in secrets { #expect(!serialized.contains(secret)) }

                // The operator's view, and /metrics, once the server has recorded the last answer.
                var rows: [JSONValue] = []
                let deadline = Date().addingTimeInterval(5)
                while rows.count < 4, Date() < deadline {
                    let listed = try await AuditTrail.withDatabase(world.database, logger: Logger(label: "t")) {
                        try await EventOutbox.page($0, state: "delivered", account: user, after: 0, limit: 10)
                    }
                    guard case .array(let page)? = listed["events"] else { throw ReceiverFailure() }
                    rows = page
                    if rows.count < 4 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(rows.map { $0["id"] } == deliveries.map { .string($0.id) })
                let metrics = try await world.send(.GET, "/metrics", headers: world.bearer(scrapeToken))
                #expect(metrics.text.contains("share_recovery_events_delivered_total 4"))
            }
        }
    }

    struct ReceiverFailure: Error {}

    @Test("a receiver nobody here wrote (Python's standardwebhooks) verifies every delivery")
    func pythonReceiver() async throws {
        guard let python = StandardWebhooksReceiver.python() else {
            let skipped = Comment(rawValue: StandardWebhooksReceiver.skipped)
            Issue.record(skipped, severity: .warning)
            try Test.cancel(skipped)
        }
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Two secrets: the server signs with the first; the receiver accepts either.
        let (secretPath, _, _) = try Self.secretFile(in: directory)
        let (older, _) = try Self.secret()
        let lines = try String(contentsOfFile: secretPath, encoding: .utf8) + older + "\n"
        try lines.write(toFile: secretPath, atomically: true, encoding: .utf8)
        let receiver = try StandardWebhooksReceiver(python: python, secretFile: secretPath, directory: directory)
        defer { receiver.stop() }
        try await TestWorld.with(
            .sqlite,
            configure: {
                $0.events = EventsConfiguration(
                    url: "http://127.0.0.1:\(receiver.port)/events", secretFile: secretPath)
                $0.events?.pollMilliseconds = 20
            }
        ) { world in
            for user in ["py-1", "py-2"] {
                let token = try await world.token(for: user, purpose: "addOrUpdateRecovery")
                let text = try Fixtures.cipherText(method: .password)
                try await world.send(
                    .PUT, "/users/\(user)/user-backup-share?backupMethod=PASSWORD",
                    json: .object([("cipherText", .string(text))]), headers: world.bearer(token))
            }
            let deadline = Date().addingTimeInterval(10)
            var received: [EventReceiver.Delivery] = []
            while received.count < 2, Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
                received = StandardWebhooksReceiver.received(log: receiver.log).map(EventReceiver.Delivery.init)
            }
            #expect(received.count == 2 && received.allSatisfy { $0.verified }, "\(received)")
            // Order is promised per account only: two accounts' events may be delivered either way.
            #expect(received.compactMap(\.account).sorted() == ["py-1", "py-2"])
            #expect(received.allSatisfy { $0.type == "recoveryMethod.added" })
        }
    }

    @Test("backoff doubles from the first delay up to the cap, less a random part of at most half")
    func backoff() async throws {
        try await TestWorld.withStorage(.sqlite) { storage in
            let (_, signer) = try Self.secret()
            let worker = Self.worker(storage, url: "http://127.0.0.1:9/", signer: signer)
            for attempts in 1...40 {
                let full = min(600_000, Int64(1_000) << Int64(min(attempts - 1, 30)))
                for _ in 0..<20 {
                    let delay = worker.backoff(afterAttempts: attempts)
                    #expect(delay >= full / 2 && delay <= full, "attempt \(attempts): \(delay)")
                }
            }
        }
    }

    @Test("a server refuses to start with an events URL it cannot use or a secret file that is not whsec_ secrets")
    func refusedConfiguration() async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (secretPath, _, _) = try Self.secretFile(in: directory)
        let badPath = directory + "/bad.secrets"
        try "not-a-secret\n".write(toFile: badPath, atomically: true, encoding: .utf8)
        let cases: [EventsConfiguration] = [
            EventsConfiguration(url: "ftp://integrator.example/events", secretFile: secretPath),
            EventsConfiguration(url: "http://127.0.0.1:9/events", secretFile: secretPath, maximumAttempts: 0),
            EventsConfiguration(url: "http://127.0.0.1:9/events", secretFile: badPath),
            EventsConfiguration(url: "http://127.0.0.1:9/events", secretFile: directory + "/missing"),
        ]
        for events in cases {
            await #expect(throws: ServerStartError(.invalidConfiguration, "")) {
                let world = try await TestWorld.start(.sqlite) { $0.events = events }
                await world.stop()
            }
        }
    }

    @Test(
        "through a faulty network every event arrives verified, in order per account, duplicates with the same id and body",
        arguments: TestBackend.allCases)
    func faultyNetwork(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let (_, signer) = try Self.secret()
            let receiver = EventReceiver(signer: signer)
            let accounts = (0..<5).map { "faulty-\($0)" }
            for round in 0..<8 {
                try await storage.recordAudit(accounts.map { Self.event(.recoveryCompleted, $0, "\($0)-\(round)") })
            }
            var rates = FaultProxy.Rates()
            rates.reset = 0.1
            rates.dropAnswer = 0.15
            rates.maximumDelayMilliseconds = 100
            try await receiver.runBehindProxy(seed: 39, rates: rates) { url, proxy in
                let worker = Self.worker(storage, url: url, signer: signer, maximumAttempts: 100) {
                    $0.initialBackoffMilliseconds = 5
                    $0.maximumBackoffMilliseconds = 40
                }
                let deadline = Date().addingTimeInterval(20)
                while Date() < deadline {
                    let pending = try await storage.outboxEntries(state: .pending, account: nil, after: 0, limit: 1)
                    if pending.isEmpty { break }
                    if try await worker.deliverDue(now: EventDelivery.nowMilliseconds) == 0 {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                #expect(proxy.report.counts.values.reduce(0, +) > 0, "no fault was injected")
            }
            let outbox = try await storage.outboxEntries(state: nil, account: nil, after: 0, limit: 100)
            #expect(outbox.count == 40 && outbox.allSatisfy { $0.state == .delivered })
            EventArrivals.expectArrived(receiver.deliveries, outbox: outbox)
        }
    }

    @Test(
        "a receiver down for less than the retry horizon gets every event once it is back, in order",
        arguments: TestBackend.allCases)
    func receiverDownThenBack(backend: TestBackend) async throws {
        try await TestWorld.withStorage(backend) { storage in
            let (_, signer) = try Self.secret()
            let receiver = EventReceiver(signer: signer)
            let accounts = (0..<3).map { "down-\($0)" }
            // Down: the proxy resets every connection before a request reaches the receiver.
            let down = FaultProxy.Rates(
                reset: 1, dropAnswer: 0, delayRequest: 0, delayAnswer: 0, maximumDelayMilliseconds: 0)
            try await receiver.runBehindProxy(seed: 39, rates: down) { url, proxy in
                // Retries from 50 ms doubling to 400 ms, 30 attempts: a horizon of at least 5 s (each delay
                // at least half its step), more than the 2 s the receiver is down.
                let worker = Self.worker(storage, url: url, signer: signer, maximumAttempts: 30) {
                    $0.pollMilliseconds = 20
                    $0.initialBackoffMilliseconds = 50
                    $0.maximumBackoffMilliseconds = 400
                }
                let delivering = Task { try await worker.run() }
                defer { delivering.cancel() }
                let downSince = Date()
                for round in 0..<4 {
                    try await storage.recordAudit(accounts.map { Self.event(.deviceAdded, $0, "\($0)-\(round)") })
                    try await Task.sleep(for: .milliseconds(250))
                }
                try await Task.sleep(for: .seconds(max(0, 2 - Date().timeIntervalSince(downSince))))
                let whileDown = try await storage.outboxEntries(state: nil, account: nil, after: 0, limit: 100)
                #expect(receiver.deliveries.isEmpty && proxy.report.counts[.reset, default: 0] >= 3)
                #expect(whileDown.count == 12 && whileDown.allSatisfy { $0.state == .pending })
                proxy.setEnabled(false)  // back up
                #expect(try await receiver.wait(seconds: 10) { Set($0.map(\.id)).count >= 12 })
                // The worker records the last answer just after the receiver took it.
                let deadline = Date().addingTimeInterval(5)
                var outbox = whileDown
                while !outbox.allSatisfy({ $0.state == .delivered }), Date() < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    outbox = try await storage.outboxEntries(state: nil, account: nil, after: 0, limit: 100)
                }
                #expect(outbox.allSatisfy { $0.state == .delivered }, "\(outbox.map(\.state))")
                // The first event of each account was retried while down; none ran out of attempts.
                #expect(
                    accounts.allSatisfy { account in (outbox.first { $0.event.account == account }?.attempts ?? 0) > 1 }
                )
                EventArrivals.expectArrived(receiver.deliveries, outbox: outbox)
                delivering.cancel()
                _ = await delivering.result
            }
        }
    }
}
