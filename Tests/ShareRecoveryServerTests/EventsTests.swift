import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import Testing

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
        metrics: ServerMetrics = ServerMetrics()
    ) -> EventDelivery {
        var configuration = EventsConfiguration(url: url, secretFile: "unused", maximumAttempts: maximumAttempts)
        configuration.initialBackoffMilliseconds = 1_000
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
        #expect(Migrations.eventOutboxAuditKinds == IntegratorEventKind.allCases.map(\.auditKind.rawValue))
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
}
