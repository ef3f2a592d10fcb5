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
        "POST /wallets/signing-sessions/{sessionId}/sign", "POST /wallets/device-sessions",
        "POST /wallets/device-sessions/{sessionId}/finish", "GET /wallets/devices",
        "GET /wallets/devices/{deviceId}/enrolment",
        "DELETE /wallets/devices/{deviceId}", "POST /wallets/eject", "POST /wallets/ecdsa/pair-setups",
        "POST /wallets/ecdsa/pair-setups/{sessionId}/finish", "POST /wallets/ecdsa/signing-sessions",
        "POST /wallets/ecdsa/signing-sessions/{sessionId}/round2",
        "POST /wallets/ecdsa/signing-sessions/{sessionId}/round3",
        "POST /wallets/ecdsa/signing-sessions/{sessionId}/abort",
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

    /// Identifiers at and beyond each limit: empty, 255 and 256 bytes, non-ASCII, every kind of control character.
    static let identifierProbes: [String] = [
        "a", "ü", "a b", "a/b?c#d%e&f", String(repeating: "a", count: 255), String(repeating: "é", count: 127),
        "\u{80}", "", String(repeating: "a", count: 256), "a\u{0}b", "tab\there", "line\n", "\u{1F}", "del\u{7F}",
    ]

    @Test(
        "the document accepts an identifier, userId, limit or cursor exactly when the server does",
        arguments: TestBackend.allCases)
    func limitsAgree(backend: TestBackend) async throws {
        let spec = OpenAPISpec.shared
        func accepts(_ schema: JSONValue?, _ value: JSONValue) throws -> Bool {
            spec.validate(value, try #require(schema), at: "$").isEmpty
        }
        let userId = spec.resolve(spec.root["components"]?["parameters"]?["UserId"])?["schema"]
        let identifier = spec.root["components"]?["schemas"]?["Identifier"]
        let limit = spec.resolve(spec.root["components"]?["parameters"]?["AuditLimit"])?["schema"]
        let cursor = spec.resolve(spec.root["components"]?["parameters"]?["AuditCursor"])?["schema"]
        try await TestWorld.with(backend) { world in
            for probe in Self.identifierProbes {
                let path = try await world.send(
                    .GET, "/users/\(Self.percentEncoded(probe))/audit-events", headers: world.webhookHeaders)
                #expect(
                    try accepts(userId, .string(probe)) == (path.status == 200),
                    "userId \(probe.debugDescription.prefix(40)): the server answered \(path.status)")
                let body = try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(probe))]),
                    headers: world.webhookHeaders)
                #expect(
                    try accepts(identifier, .string(probe)) == (body.status == 200),
                    "clientId \(probe.debugDescription.prefix(40)): the server answered \(body.status)")
            }
            // The one difference, which both documents state: the server counts bytes, maxLength characters.
            let wide = String(repeating: "é", count: 128)
            #expect(try accepts(identifier, .string(wide)) && accepts(userId, .string(wide)))
            #expect(
                try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(wide))]),
                    headers: world.webhookHeaders
                ).status == 400)
            for value in ["1", "50", "200", "0", "201", "-1", "1.5", "abc", ""] {
                let response = try await world.send(
                    .GET, "/users/probe/audit-events?limit=\(value)", headers: world.webhookHeaders)
                let asJSON: JSONValue = (try? StrictJSON.parse(Array(value.utf8))) ?? .string(value)
                #expect(try accepts(limit, asJSON) == (response.status == 200), "limit=\(value): \(response.status)")
            }
            for value in [
                "0000000000000000", "7fffffffffffffff", "8000000000000000", "ffffffffffffffff", "ABCDEF0123456789",
                "123", "00000000000000000",
            ] {
                let response = try await world.send(
                    .GET, "/users/probe/audit-events?after=\(value)", headers: world.webhookHeaders)
                #expect(
                    try accepts(cursor, .string(value)) == (response.status == 200),
                    "after=\(value): \(response.status)")
            }
        }
    }

    /// The request body schema of one property of an operation.
    static func requestProperty(_ method: String, _ path: String, _ name: String) throws -> JSONValue {
        let spec = OpenAPISpec.shared
        let operation = spec.root["paths"]?[path]?[method.lowercased()]
        let body = spec.resolve(spec.resolve(operation?["requestBody"])?["content"]?["application/json"]?["schema"])
        return try #require(spec.resolve(body?["properties"]?[name]), "\(method) \(path) has no \(name)")
    }

    @Test("the document declares the shortest sealedShare and backupShare the server accepts")
    func shortestSealedShares() async throws {
        let spec = OpenAPISpec.shared
        let sealedSchema = try Self.requestProperty("POST", "/custodian/wallets", "sealedShare")
        let backupSchema = try Self.requestProperty("POST", "/webhook/backup", "backupShare")
        try await TestWorld.with(.sqlite) { world in
            let keyText = try #require(try await world.send(.GET, "/custodian/key").string("publicKey"))
            let custodianKey = try #require(Hex.decode(keyText))
            // The smallest record: a one-character walletId on ed25519 (32-byte points), threshold 2.
            let signing = try KeyGeneration.generate(curve: .ed25519, walletId: "w", threshold: 2, parties: 2)
            let sealed = Base64.encode(try SealedBox.seal(try signing[1].binary(), to: custodianKey))
            let backup = try Fixtures.backupSet(curve: .ed25519, walletId: "w", parties: 2)[1]
            let share = try CustodianBackupShare(sealing: backup, method: .iCloud, custodianPublicKey: custodianKey)
                .json
            for (schema, shortest, field) in [
                (sealedSchema, sealed, "sealedShare"), (backupSchema, share, "backupShare"),
            ] {
                #expect(spec.validate(.string(shortest), schema, at: field).isEmpty, "\(field) of the shortest share")
                #expect(schema["minLength"] == .number(String(shortest.count)), "\(field): \(shortest.count)")
                #expect(!spec.validate(.string(""), schema, at: field).isEmpty, "an empty \(field) is schema-valid")
            }
            // Both shortest forms are accepted; the empty values the schema now refuses, the server refuses too.
            for (path, field, accepted) in [
                ("/custodian/wallets", "sealedShare", sealed), ("/webhook/backup", "backupShare", share),
            ] {
                for (value, status) in [(accepted, 204), ("", 400)] {
                    let response = try await world.send(
                        .POST, path, json: .object([("clientId", .string("shortest")), (field, .string(value))]),
                        headers: world.webhookHeaders)
                    #expect(response.status == status, "\(field) of \(value.count) characters: \(response.text)")
                }
            }
        }
    }

    /// Every byte but the unreserved ones as %XX (RFC 3986 section 2.3).
    static func percentEncoded(_ text: String) -> String {
        text.utf8.map { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                String(UnicodeScalar(byte))
            default: (byte < 16 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
            }
        }.joined()
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

    @Test("every operation's success response validates against the spec", arguments: TestBackend.allCases)
    func walkEveryOperation(backend: TestBackend) async throws {
        let metricsToken = Hex.encode(SystemRandom().bytes(count: 16))
        try await TestWorld.with(
            backend, configure: { $0.metricsToken = .value(SecureBytes(copying: Array(metricsToken.utf8))) }
        ) {
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
            #expect(
                try await world.send(.GET, "/users/spec/audit-events?limit=5", headers: world.webhookHeaders).status
                    == 200)
            // The wallet's birth by DKG and one signature with the custodian as party 2.
            let sign = try await world.token(for: "spec-wallet", purpose: "sign")
            let device = try await WalletWire.createWallet(
                world: world, userId: "spec-wallet", walletId: "w-spec-dkg", curve: .secp256k1, token: sign)
            let signature = try await WalletWire.sign(
                world: world, share: device, userId: "spec-wallet", message: [1, 2, 3], mode: .bip340, token: sign)
            #expect(
                SignatureVerifier.verify(
                    signature: signature, message: [1, 2, 3], publicKey: device.publicKey, mode: .bip340))
            // ECDSA with the custodian: a pair setup, a signature, and a session the device aborts.
            let setup = try await ECDSAWire.makePairSetup(
                world: world, share: device, userId: "spec-wallet", token: sign)
            let digest = [UInt8](repeating: 9, count: 32)
            let rounds = try await ECDSAWire.sign(
                world: world, share: device, setup: setup, userId: "spec-wallet", token: sign, digest: digest)
            #expect(rounds.map(\.status) == [201, 200, 200], "\(rounds.map(\.text))")
            let (_, opened) = try await ECDSAWire.open(
                world: world, share: device, setup: setup, userId: "spec-wallet", token: sign, digest: digest)
            let abortPath = "/wallets/ecdsa/signing-sessions/\(try #require(opened.string("sessionId")))/abort"
            #expect(
                try await world.send(
                    .POST, abortPath, json: .object([("check", .string("round1"))]), headers: world.bearer(sign)
                ).status == 204)
            // A second device added (its enrolment read), the devices listed, the device removed.
            let addDevice = try await world.token(for: "spec-wallet", purpose: "addDevice")
            _ = try await DeviceWire.add(
                world: world, approver: device, userId: "spec-wallet", deviceId: "spec-phone", token: addDevice)
            #expect(try await DeviceWire.list(world: world, token: sign) == ["primary", "spec-phone"])
            let removeDevice = try await world.token(for: "spec-wallet", purpose: "removeDevice")
            #expect(
                try await DeviceWire.remove(world: world, deviceId: "spec-phone", token: removeDevice).status == 204)
            // Its eject, with a token of its own purpose.
            let eject = try await world.token(for: "spec-wallet", purpose: "eject")
            let ejected = try await WalletWire.eject(world: world, share: device, userId: "spec-wallet", token: eject)
            #expect(ejected.status == 200, "\(ejected.text)")

            let covered = SpecCoverage.shared.all
            for (method, template) in OpenAPISpec.shared.operations {
                #expect(
                    covered.contains { $0.hasPrefix("\(method) \(template) 2") },
                    "\(method) \(template) never answered 2xx")
            }
        }
    }
}
