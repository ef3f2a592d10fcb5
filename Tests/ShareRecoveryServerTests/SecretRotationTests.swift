import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Secrets with several values, one a line: the first is sent or signs, every one is accepted, and
/// each process names the value it signs with by a key id, never by the value.
@Suite("Secret rotation: several values a secret")
struct SecretRotationTests {
    static func bytes(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    @Test("a secret file's lines: blank lines and trailing CR or spaces ignored; a short line named by number")
    func lines() throws {
        let ring = try SecretLoading.webhookSecret(
            .value(Self.bytes("\nthe new webhook secret value\r\n\n  the old webhook secret value  \n")))
        #expect(ring.values.count == 2)
        #expect(ring.signing == Self.bytes("the new webhook secret value"))
        #expect(ring.values[1] == Self.bytes("  the old webhook secret value"))
        #expect(ring.accepts(Self.bytes("the new webhook secret value")))
        #expect(ring.accepts(Self.bytes("  the old webhook secret value")))
        #expect(!ring.accepts(Self.bytes("the new webhook secret valu")))
        #expect(!ring.accepts(Self.bytes("")))

        do {
            _ = try SecretLoading.webhookSecret(
                .value(Self.bytes("a long enough first value\nshort\n")), what: "the metrics token")
            Issue.record("a 5-byte value was taken")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(error.reason.contains("the metrics token") && error.reason.contains("line 2"))
            #expect(!error.reason.contains("short") && !error.reason.contains("first value"))
        }
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.webhookSecret(.value(Self.bytes("\n \r\n")))
        }
    }

    @Test("a key id: 8 hex digits, the same for the same value, different for another, not the value")
    func keyIds() {
        let value = SystemRandom().secureBytes(count: 32)
        let id = SecretRing.keyId(of: value)
        #expect(id.count == 8 && id.allSatisfy(\.isHexDigit))
        #expect(SecretRing.keyId(of: SecureBytes(copying: value.revealedBytes())) == id)
        #expect(SecretRing.keyId(of: SystemRandom().secureBytes(count: 32)) != id)
        #expect(!Hex.encode(value.revealedBytes()).contains(id))
    }

    @Test(
        "a server takes every value of the webhook secret and the metrics token, and names the signing ones by key id",
        arguments: TestBackend.allCases)
    func rotation(backend: TestBackend) async throws {
        let newSecret = Hex.encode(SystemRandom().bytes(count: 16))
        let oldToken = Hex.encode(SystemRandom().bytes(count: 16))
        let newToken = Hex.encode(SystemRandom().bytes(count: 16))
        let log = CapturedLog()
        var logger = Logger(label: "rotation") { _ in CapturingLogHandler(sink: log) }
        logger.logLevel = .info
        try await TestWorld.with(backend) { configuration in
            // The rotation's first step: the new value written as the first line, the old one kept.
            guard case .value(let old) = configuration.webhookSecret else { return }
            configuration.webhookSecret = .value(
                SecureBytes.concatenating([Self.bytes(newSecret + "\n"), old, Self.bytes("\n")]))
            configuration.metricsToken = .value(Self.bytes("\(newToken)\n\(oldToken)\n"))
            configuration.logger = logger
        } _: { world in
            let fetch = JSONValue.object([("clientId", .string("rotation-client"))])
            for secret in [newSecret, world.webhookSecret] {
                let answer = try await world.send(
                    .POST, "/webhook/backup/fetch", json: fetch, headers: [("X-Webhook-Secret", secret)])
                #expect(answer.status == 200)
            }
            let stranger = try await world.send(
                .POST, "/webhook/backup/fetch", json: fetch,
                headers: [("X-Webhook-Secret", Hex.encode(SystemRandom().bytes(count: 16)))])
            #expect(stranger.status == 401 && stranger.errorCode == "unauthorized")

            for token in [newToken, oldToken] {
                #expect(try await world.send(.GET, "/metrics", headers: world.bearer(token)).status == 200)
            }
            let scraped = try await world.send(.GET, "/metrics", headers: world.bearer(oldToken), checkSpec: false)
            let secrets = OperationsTests.samples(scraped.text).filter { $0.name == "share_recovery_secret_values" }
            let webhookKeyId = SecretRing.keyId(of: Self.bytes(newSecret))
            let tokenKeyId = SecretRing.keyId(of: Self.bytes(newToken))
            #expect(
                secrets.contains { $0.labels == ["secret": "webhookSecret", "key_id": webhookKeyId] && $0.value == 2 })
            #expect(
                secrets.contains { $0.labels == ["secret": "metricsToken", "key_id": tokenKeyId] && $0.value == 2 })
            #expect(secrets.contains { $0.labels["secret"] == "masterKey" && $0.value == 1 })

            let started = log.all.filter { $0.contains("share-recovery server listening") }
            #expect(started.count == 1)
            #expect(started.allSatisfy { $0.contains(webhookKeyId) && $0.contains(tokenKeyId) })
            for secret in [newSecret, world.webhookSecret, newToken, oldToken] {
                #expect(!log.all.contains { $0.contains(secret) })
            }
        }
    }
}
