import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// docs/openapi.yaml documents every route, its JSON copy agrees with it, and real responses match it
/// (every ``TestWorld/send`` checks its response; this suite also walks every operation once).
@Suite("OpenAPI")
struct OpenAPITests {
    /// The routes of the API contract, plus /health.
    static let contract: Set<String> = [
        "GET /health", "GET /ready", "GET /metrics",
        "PUT /users/{userId}/user-backup-share", "GET /users/{userId}/user-backup-share",
        "DELETE /users/{userId}/user-backup-share",
        "GET /users/{userId}/recovery-methods", "GET /users/{userId}/audit-events",
        "POST /webhook/backup", "POST /webhook/backup/fetch", "POST /webhook/backup/delete",
        "POST /recovery/flows", "POST /recovery/flows/{flowId}/verify",
        "GET /custodian/key", "POST /custodian/wallets",
        "POST /recovery/sessions", "POST /recovery/sessions/{sessionId}/finish",
        "POST /recovery/sessions/{sessionId}/confirm",
        "DELETE /recovery/sessions/{sessionId}",
        "POST /wallets/dkg", "POST /wallets/dkg/{sessionId}/finish", "POST /wallets/signing-sessions",
        "POST /wallets/signing-sessions/{sessionId}/sign",
    ]

    @Test("the spec is OpenAPI 3.1 and documents exactly the contract's routes")
    func documentsEveryRoute() throws {
        let spec = OpenAPISpec.shared
        #expect(spec.root["openapi"] == .string("3.1.0"))
        #expect(Set(spec.operations.map { "\($0.method) \($0.path)" }) == Self.contract)
        // Every operation declares its success status, and every $ref resolves.
        for (method, path) in spec.operations {
            guard case .object(let responses)? = spec.root["paths"]?[path]?[method.lowercased()]?["responses"] else {
                Issue.record("\(method) \(path) has no responses")
                continue
            }
            #expect(responses.contains { $0.key.hasPrefix("2") }, "\(method) \(path)")
        }
        var unresolved: [String] = []
        func walk(_ value: JSONValue) {
            switch value {
            case .object(let members):
                if case .string(let reference)? = value["$ref"], spec.resolve(value) == nil {
                    unresolved.append(reference)
                }
                for member in members { walk(member.value) }
            case .array(let elements): elements.forEach(walk)
            default: break
            }
        }
        walk(spec.root)
        #expect(unresolved.isEmpty)
    }

    @Test("Resources/openapi.json is the YAML's JSON form (regenerate with REGENERATE_OPENAPI_JSON=1)")
    func jsonCopyAgrees() throws {
        let yaml = OpenAPISpec.shared.root
        let copyURL = try #require(
            Bundle.module.url(forResource: "openapi", withExtension: "json", subdirectory: "Resources"))
        if ProcessInfo.processInfo.environment["REGENERATE_OPENAPI_JSON"] == "1" {
            let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "Resources/openapi.json")
            try Data((JSONWriter.writeIndented(yaml) + "\n").utf8).write(to: source)
        }
        let copy = try StrictJSON.parse(Array(try Data(contentsOf: copyURL)))
        #expect(copy == yaml, "docs/openapi.yaml and Resources/openapi.json differ: regenerate the JSON copy")
    }

    @Test("the minimal YAML reader handles the constructs the spec uses")
    func yamlReader() throws {
        let text = """
            a: 1
            b: 'x: y'
            c:
              - one
              - k: v
                l: [p, 'q']
            d: >-
              folded
              text
            '200':
              e: {}
            """
        #expect(
            try MiniYAML.parse(text)
                == .object([
                    ("a", .number("1")), ("b", .string("x: y")),
                    (
                        "c",
                        .array([
                            .string("one"),
                            .object([("k", .string("v")), ("l", .array([.string("p"), .string("q")]))]),
                        ])
                    ),
                    ("d", .string("folded text")), ("200", .object([("e", .object([]))])),
                ]))
        #expect(throws: MiniYAML.Failure.self) { try MiniYAML.parse("a: &anchor 1") }
    }

    @Test("every operation's success response validates against the spec", arguments: TestBackend.available)
    func walkEveryOperation(backend: TestBackend) async throws {
        let metricsToken = Hex.encode(SystemRandom().bytes(count: 16))
        try await TestWorld.with(backend, configure: { $0.metricsToken = .value(SecureBytes(copying: Array(metricsToken.utf8))) }) {
            world in
            // Recovery flows, tokens, the integrator API, webhooks and a full session: each send() checks the spec.
            let client = SessionClient(world: world, clientId: "spec")
            let signing = try KeyGeneration.generate(curve: .ed25519, walletId: "w-spec")
            try await client.register(signing[1])
            let add = try await world.token(for: "spec", purpose: "addOrUpdateRecovery")
            let backup = try await client.open(purpose: "backup", method: .iCloud, ownShare: signing[0], token: add)
            #expect(try await client.deliverBackupShares(of: try await client.finish(backup, token: add)) == 1)
            #expect(
                try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string("spec"))]),
                    headers: world.webhookHeaders
                ).status == 200)
            let text = try CipherText.encrypt(
                backup.newShare, method: .iCloud, secret: .keyMaterial(SecureBytes(zeros: 32))
            ).base64
            let path = "/users/spec/user-backup-share?backupMethod=ICLOUD"
            #expect(
                try await world.send(
                    .PUT, path, json: .object([("cipherText", .string(text))]), headers: world.bearer(add)
                ).status == 204)
            #expect(try await client.confirm(backup.sessionId, token: add).status == 204)
            let recover = try await world.token(for: "spec", purpose: "recover")
            #expect(try await world.send(.GET, path, headers: world.bearer(recover)).status == 200)
            #expect(
                try await world.send(.GET, "/users/spec/recovery-methods", headers: world.bearer(recover)).status == 200
            )
            let recovery = try await client.open(
                purpose: "recovery", method: .iCloud, ownShare: backup.newShare, token: recover)
            #expect(try await client.abort(recovery.sessionId, token: recover).status == 204)
            let delete = try await world.token(for: "spec", purpose: "deleteRecovery")
            #expect(try await world.send(.DELETE, path, headers: world.bearer(delete)).status == 204)
            #expect(
                try await world.send(
                    .POST, "/webhook/backup/delete",
                    json: .object([("clientId", .string("spec")), ("backupMethod", .string("ICLOUD"))]),
                    headers: world.webhookHeaders
                ).status == 204)
            #expect(try await world.send(.GET, "/health").status == 200)
            #expect(try await world.send(.GET, "/ready").status == 200)
            #expect(try await world.send(.GET, "/metrics", headers: world.bearer(metricsToken)).status == 200)
            #expect(try await world.send(.GET, "/custodian/key").status == 200)
            #expect(try await world.send(.GET, "/users/spec/audit-events?limit=5", headers: world.webhookHeaders).status == 200)
            // The wallet's birth by DKG and one signature with the custodian as party 2.
            let sign = try await world.token(for: "spec-wallet", purpose: "sign")
            let device = try await WalletWire.createWallet(
                world: world, userId: "spec-wallet", walletId: "w-spec-dkg", curve: .secp256k1, token: sign)
            let signature = try await WalletWire.sign(
                world: world, share: device, userId: "spec-wallet", message: [1, 2, 3], mode: .bip340, token: sign)
            #expect(SignatureVerifier.verify(signature: signature, message: [1, 2, 3], publicKey: device.publicKey, mode: .bip340))

            let covered = SpecCoverage.shared.all
            for (method, template) in OpenAPISpec.shared.operations {
                #expect(
                    covered.contains { $0.hasPrefix("\(method) \(template) 2") },
                    "\(method) \(template) never answered 2xx")
            }
        }
    }
}
