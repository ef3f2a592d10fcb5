import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// Every log line, as text.
final class CapturedLog: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Keeps every event at every level, with its metadata and error.
struct CapturingLogHandler: LogHandler {
    let sink: CapturedLog
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink.append(
            "\(event.level) \(event.message) \(event.metadata ?? [:]) \(metadata) \(event.error.map { "\($0)" } ?? "") \(event.source)"
        )
    }
}

/// The engine over HTTP against the reference server, with both sides logging at `trace` into
/// memory: a backup, a recovery and failing calls leave no known secret in a log line, and the
/// server's answers to the same API calls (made directly) carry none either.
@Suite("Secret hygiene of the server and the HTTP clients")
struct SecretHygieneServerTests {
    @Test(arguments: Curve.allCases)
    func noSecretInLogsOrResponses(curve: Curve) async throws {
        let log = CapturedLog()
        var logger = Logger(label: "hygiene") { _ in CapturingLogHandler(sink: log) }
        logger.logLevel = .trace
        let loose = ServerConfiguration.RateLimit(limit: 1_000, windowSeconds: 900)
        try await TestWorld.with(.sqlite) { configuration in
            configuration.logger = logger
            // One OTP-issued token per engine call: far more than a person's flows.
            configuration.rateLimits = .init(
                verifyPerIdentifier: loose, verifyPerAddress: loose, flowCreationPerIdentifier: loose,
                flowCreationPerAddress: loose)
        } _: { world in
            let clientId = "hygiene-\(curve)"
            let signing = try KeyGeneration.generate(curve: curve, walletId: "w-hygiene", threshold: 2, parties: 2)
            let client = SessionClient(world: world, clientId: clientId)
            try await client.register(signing[1])
            let base = world.servers[0].baseURL()
            let tokens: TokenProvider = { purpose in
                try await world.token(for: clientId, purpose: purpose.rawValue)
            }
            let transport = HTTPTransport(configuration: .init(timeout: .seconds(30)), logger: logger)
            let webhookSecret = SecureBytes(copying: Array(world.webhookSecret.utf8))
            func engine(_ store: any SigningShareStore) -> RecoveryEngine {
                RecoveryEngine(
                    configuration: .init(
                        userId: clientId,
                        custodian: HTTPCustodian(baseURL: base, tokenProvider: tokens, transport: transport),
                        shareStore: store,
                        cipherTextSource: HTTPCipherTextSource(
                            baseURL: base, tokenProvider: tokens, transport: transport),
                        cipherTextStore: HTTPCipherTextStore(
                            baseURL: base, tokenProvider: tokens, transport: transport),
                        custodianBackupSink: HTTPCustodianBackupSink(
                            webhookBaseURL: base + "/webhook", webhookSecret: webhookSecret, transport: transport),
                        argon2: .minimum))
            }
            let password = "server hygiene pass \(curve)"
            let cloudKey = SystemRandom().secureBytes(count: 32)
            let device = engine(InMemorySigningShareStore(current: signing[0]))
            let backup = try await device.backup(method: .password, secret: .text(password))
            try await device.backup(method: .cloudKey, secret: .keyMaterial(cloudKey), keyId: "kms/hygiene")
            let userShare = try backup.decrypt(secret: .text(password))
            let recovered = try await engine(InMemorySigningShareStore()).recover(
                method: .password, secret: .text(password))
            #expect(recovered.publicKey == signing[0].publicKey)

            // Failures on both sides: a wrong cloud key (client), the lost device's share (server), a
            // wrong webhook secret (server).
            var errors: [any Error] = []
            var wrongKey = cloudKey.revealedBytes()
            wrongKey[0] ^= 1
            do {
                try await engine(InMemorySigningShareStore()).recover(
                    method: .cloudKey, secret: .keyMaterial(SecureBytes(copying: wrongKey)))
            } catch { errors.append(error) }
            do {
                try await device.backup(method: .passkey, secret: .keyMaterial(cloudKey))
            } catch { errors.append(error) }
            do {
                _ = try await HTTPCustodianShareSource(
                    webhookBaseURL: base + "/webhook", webhookSecret: SecureBytes(copying: Array("x".utf8)),
                    transport: transport
                ).fetchBackupShares(clientId: clientId)
            } catch { errors.append(error) }
            try #require(errors.count == 3, "\(errors)")
            #expect((errors[0] as? ShareRecoveryError)?.code == .authenticationFailed)
            #expect((errors[1] as? ShareRecoveryError)?.code == .noMatchingShare)
            #expect((errors[2] as? TransportError)?.code == .unauthorized)

            // The same API calls made directly, to see the server's answers.
            let recoverToken = try await world.token(for: clientId, purpose: "recover")
            var responses = [
                try await world.send(
                    .GET, "/users/\(clientId)/user-backup-share?backupMethod=PASSWORD",
                    headers: world.bearer(recoverToken)),
                try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(clientId))]),
                    headers: world.webhookHeaders),
                try await world.send(.GET, "/custodian/key"),
            ]
            let opened = try await client.openResponse(
                purpose: "recovery", method: .password, ownShare: userShare, token: recoverToken)
            responses.append(opened)
            // A fresh token: the first one may be bound to the session it opened.
            let secondToken = try await world.token(for: clientId, purpose: "recover")
            responses.append(
                try await client.openResponse(
                    purpose: "recovery", method: .password, ownShare: signing[0], token: secondToken))
            #expect(opened.status == 201 && responses.last?.status == 404)

            var secrets = [
                SecretForms("password", bytes: Array(password.utf8)), SecretForms("cloud key", secret: cloudKey),
                SecretForms("master key", secret: world.masterKey),
                SecretForms("webhook secret", secret: webhookSecret),
            ]
            for record in signing + [userShare, recovered] {
                secrets.append(
                    SecretForms(
                        "\(record.kind) share \(record.partyIndex) gen \(record.generation)",
                        secret: try #require(record.secret).rawRepresentation))
            }
            let lines = log.all
            #expect(lines.count > 10, "the server and the clients logged: \(lines.count) lines")
            for line in lines {
                #expect(SecretForms.leaks(of: secrets, in: line).isEmpty, "log: \(line)")
            }
            for response in responses {
                let text = response.text + response.headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
                #expect(SecretForms.leaks(of: secrets, in: text).isEmpty, "response: \(text)")
            }
            for error in errors {
                for text in ["\(error)", String(reflecting: error), error.localizedDescription] {
                    #expect(SecretForms.leaks(of: secrets, in: text).isEmpty, "error: \(text)")
                }
            }
            // The search finds a secret where one is: a share JSON with its secret.
            #expect(!SecretForms.leaks(of: secrets, in: signing[1].json(includingSecret: true)).isEmpty)
        }
    }
}
