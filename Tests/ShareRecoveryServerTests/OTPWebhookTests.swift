import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The OTP webhook (`serve --otp-webhook`): each code is POSTed signed per Standard Webhooks, by the
/// first secret of its file, so a gateway can refuse codes that did not come from the server.
@Suite("OTP webhook: signed one-time codes")
struct OTPWebhookTests {
    @Test(
        "a code reaches the gateway signed by the first secret of the file, the flow's id as webhook-id",
        arguments: TestBackend.allCases)
    func signed(backend: TestBackend) async throws {
        let (newText, newSigner) = try EventsTests.secret()
        let (oldText, oldSigner) = try EventsTests.secret()
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let secretFile = directory + "/otp-webhook.secrets"
        // A rotation's second step: the new secret signs, the old one waits on the second line.
        try "\(newText)\n\(oldText)\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let metricsToken = Hex.encode(SystemRandom().bytes(count: 16))
        let gateway = EventReceiver(signer: newSigner)
        try await gateway.run { url in
            let sender = try WebhookOTPSender(url: url, secretFile: secretFile)
            try await TestWorld.with(backend) { configuration in
                configuration.otpSender = sender
                configuration.metricsToken = .value(SecureBytes(copying: Array(metricsToken.utf8)))
            } _: { world in
                let before = Int64(Date().timeIntervalSince1970)
                let flowId = try await world.createFlow(identifier: "otp-webhook-user")
                #expect(try await gateway.wait { $0.count == 1 })
                let delivery = try #require(gateway.deliveries.first)
                #expect(delivery.verified)
                #expect(delivery.id == flowId)
                let timestamp = try #require(Int64(delivery.timestamp))
                #expect(timestamp >= before - 1 && timestamp <= Int64(Date().timeIntervalSince1970) + 1)
                #expect(delivery.json?["flowId"] == .string(flowId))
                #expect(delivery.json?["identifier"] == .string("otp-webhook-user"))
                guard case .string(let code)? = delivery.json?["code"] else {
                    Issue.record("no code in \(delivery.body)")
                    return
                }
                #expect(code.count == 6 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber))
                // Signed by the first secret only: a gateway still holding only the old one refuses it.
                #expect(
                    !oldSigner.verifies(
                        header: delivery.signature, id: delivery.id, timestamp: timestamp, body: delivery.body))
                // A body changed on the way no longer verifies.
                #expect(
                    !newSigner.verifies(
                        header: delivery.signature, id: delivery.id, timestamp: timestamp,
                        body: delivery.body + " "))

                let scraped = try await world.send(
                    .GET, "/metrics", headers: world.bearer(metricsToken), checkSpec: false)
                #expect(
                    OperationsTests.samples(scraped.text).contains {
                        $0.name == "share_recovery_secret_values"
                            && $0.labels == ["secret": "otpWebhookSecret", "key_id": newSigner.keyId] && $0.value == 2
                    })
            }
        }
    }

    @Test("a secret file that is not whsec_ secrets refuses to build the sender, naming the line")
    func badSecretFile() throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/otp-webhook.secrets"
        try "\(try EventsTests.secret().text)\nnot-a-secret\n".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try WebhookOTPSender(url: "http://127.0.0.1:9/otp", secretFile: path)
            Issue.record("a file with a bad line was taken")
        } catch {
            #expect(error.code == .invalidConfiguration && error.reason.contains("line 2"))
            #expect(!error.reason.contains("not-a-secret"))
        }
    }
}
