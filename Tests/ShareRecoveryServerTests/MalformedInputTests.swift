import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Client input never reaches a 500: every malformed request gets a 4xx with an error body, and random
/// mutations of valid requests do too. (``TestWorld/send`` fails the test on any 5xx.)
@Suite("Malformed input")
struct MalformedInputTests {
    struct Sample {
        let method: HTTPMethod
        let path: String
        let body: [UInt8]
        let headers: [(String, String)]
    }

    /// A world with one of everything, and a valid request for every route.
    func samples(_ world: TestWorld) async throws -> [Sample] {
        let client = SessionClient(world: world, clientId: "fuzz")
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-fuzz")
        try await client.register(signing[1])
        let keyText = try #require(try await world.send(.GET, "/custodian/key").string("publicKey"))
        let custodianKey = try #require(Hex.decode(keyText))
        // A real backup: custodian share delivered, so recovery sessions have something to select.
        let addToken = try await world.token(for: "fuzz", purpose: "addOrUpdateRecovery")
        let backup = try await client.open(purpose: "backup", method: .password, ownShare: signing[0], token: addToken)
        let finished = try await client.finish(backup, token: addToken)
        guard case .array(let shares)? = finished.json?["custodianBackupShares"],
            case .string(let share)? = shares.first
        else {
            throw ShareRecoveryError(.malformedInput, "no custodian share")
        }
        try #require(
            try await world.send(
                .POST, "/webhook/backup",
                json: .object([("clientId", .string("fuzz")), ("backupShare", .string(share))]),
                headers: world.webhookHeaders
            ).status == 204)
        try #require(try await client.confirm(backup.sessionId, token: addToken).status == 204)
        let cipherText = try CipherText.encrypt(
            backup.newShare, method: .password, secret: .text("pw"), argon2: .minimum
        ).base64
        let recoverToken = try await world.token(for: "fuzz", purpose: "recover")
        let open = try await client.open(
            purpose: "recovery", method: .password, ownShare: backup.newShare, token: recoverToken)
        let flowId = try await world.createFlow(identifier: "fuzz-flow")

        func json(_ value: JSONValue) -> [UInt8] { Array(JSONWriter.write(value).utf8) }
        let sealed = Base64.encode(try SealedBox.seal(try signing[1].binary(), to: custodianKey))
        let bearerAdd = world.bearer(try await world.token(for: "fuzz", purpose: "addOrUpdateRecovery"))
        return [
            Sample(
                method: .PUT, path: "/users/fuzz/user-backup-share?backupMethod=PASSWORD",
                body: json(.object([("cipherText", .string(cipherText))])), headers: bearerAdd),
            Sample(
                method: .POST, path: "/webhook/backup",
                body: json(.object([("clientId", .string("fuzz")), ("backupShare", .string(share))])),
                headers: world.webhookHeaders),
            Sample(
                method: .POST, path: "/webhook/backup/fetch", body: json(.object([("clientId", .string("fuzz"))])),
                headers: world.webhookHeaders),
            Sample(
                method: .POST, path: "/webhook/backup/delete",
                body: json(.object([("clientId", .string("other")), ("backupMethod", .string("PASSKEY"))])),
                headers: world.webhookHeaders),
            Sample(
                method: .POST, path: "/recovery/flows",
                body: json(.object([("identifier", .string("fuzz-2")), ("purpose", .string("recover"))])), headers: []),
            Sample(
                method: .POST, path: "/recovery/flows/\(flowId)/verify",
                body: json(.object([("code", .string("000000"))])), headers: []),
            Sample(
                method: .POST, path: "/custodian/wallets",
                body: json(.object([("clientId", .string("fuzz-other")), ("sealedShare", .string(sealed))])),
                headers: world.webhookHeaders),
            Sample(
                method: .POST, path: "/recovery/sessions",
                body: json(
                    .object([
                        ("clientId", .string("fuzz")), ("purpose", .string("recovery")),
                        ("backupMethod", .string("PASSWORD")),
                        ("clientShare", backup.newShare.jsonValue(includingSecret: false)),
                        ("clientKey", .string(Hex.encode(SessionClient.clientKey.publicKey))),
                    ])), headers: world.bearer(recoverToken)),
            Sample(
                method: .POST, path: "/recovery/sessions/\(open.sessionId)/finish",
                body: json(.object([("clientDealing", try client.outgoing(open))])), headers: world.bearer(recoverToken)
            ),
        ]
    }

    @Test("malformed requests to every route answer 4xx with an error body", arguments: TestBackend.allCases)
    func malformedRequests(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let samples = try await samples(world)
            let nested = Array(String(repeating: "[", count: 200).utf8) + Array(String(repeating: "]", count: 200).utf8)
            let bodies: [[UInt8]] = [
                [], Array("{".utf8), Array("{} x".utf8), Array("{\"a\":1,\"a\":1}".utf8),
                [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D],
                nested, Array("[]".utf8), Array("1".utf8), Array("null".utf8), Array("\"\\ud800\"".utf8),
                Array("{}".utf8),
                Array("{\"clientId\":\"\\u0000\"}".utf8), Array(repeating: 0x20, count: 10),
            ]
            for sample in samples {
                for body in bodies {
                    let response = try await world.send(sample.method, sample.path, body: body, headers: sample.headers)
                    #expect(
                        (400..<500).contains(response.status),
                        "\(sample.path) with \(String(decoding: body.prefix(20), as: UTF8.self))")
                }
                // Every field of the valid body, in turn, with a value of the wrong type, and an unknown field.
                guard case .object(let members)? = try? StrictJSON.parse(sample.body) else { continue }
                for index in members.indices {
                    for replacement: JSONValue in [
                        .null, .number("1"), .bool(true), .array([]), .object([]), .string(""),
                    ] {
                        var changed = members
                        changed[index].value = replacement
                        if changed[index].value == members[index].value { continue }
                        let response = try await world.send(
                            sample.method, sample.path, body: Array(JSONWriter.write(.object(changed)).utf8),
                            headers: sample.headers)
                        #expect(
                            (400..<500).contains(response.status), "\(sample.path) \(members[index].key)=\(replacement)"
                        )
                    }
                }
                let extra = try await world.send(
                    sample.method, sample.path,
                    body: Array(JSONWriter.write(.object(members + [("unexpected", .null)])).utf8),
                    headers: sample.headers)
                #expect(extra.status == 400 && extra.errorCode == "malformedInput")
                // Over the size limit: 413 before the body is even parsed.
                let large = try await world.send(
                    sample.method, sample.path, body: Array(repeating: 0x20, count: 300 * 1024), headers: sample.headers
                )
                #expect(large.status == 413 && large.errorCode == "payloadTooLarge")
            }
        }
    }

    @Test("paths, queries and ids that name nothing", arguments: TestBackend.allCases)
    func pathsAndQueries(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let token = world.bearer(try await world.token(for: "q", purpose: "recover"))
            let cases: [(HTTPMethod, String, Int)] = [
                (.GET, "/users/q/user-backup-share", 400),
                (.GET, "/users/q/user-backup-share?backupMethod=password", 400),
                (.GET, "/users/q/user-backup-share?backupMethod=PASSWORD&backupMethod=PASSKEY", 400),
                (.GET, "/users/q/user-backup-share?backupMethod=", 400),
                (.GET, "/users/%00/recovery-methods", 400),
                (.GET, "/users/\(String(repeating: "a", count: 300))/recovery-methods", 400),
                (.POST, "/recovery/flows/xyz/verify", 404),
                (.POST, "/recovery/flows/\(String(repeating: "A", count: 32))/verify", 404),
                (.POST, "/recovery/sessions/nope/finish", 404),
                (.POST, "/recovery/sessions/\(String(repeating: "0", count: 32))/confirm", 404),
                (.DELETE, "/recovery/sessions/\(String(repeating: "f", count: 32))", 404),
            ]
            for (method, path, status) in cases {
                let body: [UInt8]? = method == .POST ? Array("{\"code\":\"123456\",\"clientDealing\":{}}".utf8) : nil
                let response = try await world.send(method, path, body: body, headers: token)
                #expect(response.status == status, "\(method) \(path): \(response.text)")
            }
            for (method, path) in [
                (HTTPMethod.GET, "/nope"), (.PATCH, "/nope/q/recovery-methods"), (.TRACE, "/users"),
                (.DELETE, "/users/q"), (.GET, "/users//recovery-methods"), (.PUT, "/recovery/flows/x/verify/more"),
            ] {
                let response = try await world.send(method, path, headers: token, checkSpec: false)
                #expect(response.status == 404 && response.errorCode == "notFound", "\(method) \(path)")
            }
        }
    }

    @Test(
        "a method no route of a known path takes is 405 methodNotAllowed with Allow", arguments: TestBackend.allCases)
    func methodsNotAllowed(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let spec = OpenAPISpec.shared
            let declared = try #require(spec.resolve(spec.root["components"]?["responses"]?["MethodNotAllowed"]))
            #expect(declared["headers"]?["Allow"] != nil, "the 405 response declares Allow")
            let schema = try #require(declared["content"]?["application/json"]?["schema"])
            for template in Set(spec.operations.map(\.path)).sorted() {
                let allowed = spec.operations.filter { $0.path == template }.map(\.method).sorted()
                let path = template.replacing(/\{[A-Za-z]+\}/) { _ in String(repeating: "0", count: 32) }
                for method in [HTTPMethod.GET, .PUT, .POST, .DELETE, .PATCH, .OPTIONS, .TRACE]
                where !allowed.contains(method.rawValue) {
                    let response = try await world.send(method, path, headers: world.webhookHeaders, checkSpec: false)
                    #expect(
                        response.status == 405 && response.errorCode == "methodNotAllowed",
                        "\(method) \(path): \(response.status) \(response.text)")
                    #expect(
                        response.headers.first { $0.0.lowercased() == "allow" }?.1 == allowed.joined(separator: ", "),
                        "\(method) \(path)")
                    #expect(spec.validate(try #require(response.json), schema, at: "$").isEmpty, "\(response.text)")
                }
            }
            // No route takes these requests, so their answer comes before any key is looked at: not 422 for a key
            // that a flow creation used, and the key is not taken either (no replay).
            let keyed = [("Idempotency-Key", "k-405")]
            let flow = try await world.send(
                .POST, "/recovery/flows", json: .object([("identifier", .string("k-405"))]), headers: keyed)
            #expect(flow.status == 201)
            for (method, path, status) in [
                (HTTPMethod.PATCH, "/recovery/flows", 405), (.PATCH, "/recovery/flows", 405), (.POST, "/nope", 404),
            ] {
                let response = try await world.send(method, path, headers: keyed, checkSpec: false)
                #expect(response.status == status, "\(method) \(path): \(response.text)")
                #expect(!response.headers.contains { $0.0.lowercased() == "idempotent-replayed" })
            }
        }
    }

    @Test("path parameters are percent-decoded strictly")
    func percentDecoding() {
        #expect(RequestReading.percentDecoded("a%40b%2Fc") == "a@b/c")
        #expect(RequestReading.percentDecoded("%C3%BC") == "ü")
        for bad in ["%", "%z0", "%0", "%ff%fe", "%C3"] {
            #expect(RequestReading.percentDecoded(bad) == nil, "\(bad)")
        }
    }

    @Test("session and registration inputs that parse but are wrong", arguments: TestBackend.allCases)
    func semanticErrors(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let client = SessionClient(world: world, clientId: "sem")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-sem")
            let token = try await world.token(for: "sem", purpose: "addOrUpdateRecovery")
            // No registered share: nothing to reshare.
            let none = try await client.openResponse(
                purpose: "backup", method: .password, ownShare: signing[0], token: token)
            #expect(none.status == 404 && none.errorCode == "noMatchingShare")
            try await client.register(signing[1])
            func open(_ changes: [(String, JSONValue)]) async throws -> APIResponse {
                var members: [(key: String, value: JSONValue)] = [
                    ("clientId", .string("sem")), ("purpose", .string("backup")), ("backupMethod", .string("PASSWORD")),
                    ("clientShare", signing[0].jsonValue(includingSecret: false)),
                    ("clientKey", .string(Hex.encode(Fixtures.anyKey))),
                ]
                for (key, value) in changes {
                    if let index = members.firstIndex(where: { $0.key == key }) { members[index].value = value }
                }
                return try await world.send(
                    .POST, "/recovery/sessions", json: .object(members), headers: world.bearer(token))
            }
            #expect(try await open([("clientShare", signing[0].jsonValue(includingSecret: true))]).status == 400)
            #expect(try await open([("clientKey", .string(String(repeating: "0", count: 64)))]).status == 400)
            #expect(try await open([("clientKey", .string(String(repeating: "A", count: 64)))]).status == 400)
            #expect(try await open([("backupMethod", .string("password"))]).errorCode == "unsupportedMethod")
            #expect(try await open([("purpose", .string("steal"))]).status == 400)
            #expect(try await open([("clientShare", signing[1].jsonValue(includingSecret: false))]).status == 404)
            // A recovery from a signing share selects nothing (and needs a recover token).
            let recoverToken = try await world.token(for: "sem", purpose: "recover")
            let recovery = try await client.openResponse(
                purpose: "recovery", method: .password, ownShare: signing[0], token: recoverToken)
            #expect(recovery.status == 404 && recovery.errorCode == "noMatchingShare")

            let keyText = try #require(try await world.send(.GET, "/custodian/key").string("publicKey"))
            let key = try #require(Hex.decode(keyText))
            func register(_ sealed: String) async throws -> APIResponse {
                try await world.send(
                    .POST, "/custodian/wallets",
                    json: .object([("clientId", .string("sem")), ("sealedShare", .string(sealed))]),
                    headers: world.webhookHeaders)
            }
            let backupShare = try Fixtures.backupSet(parties: 2)[1]
            #expect(try await register("***").status == 400)
            #expect(
                try await register(Base64.encode(try SealedBox.seal(try signing[1].binary(), to: Fixtures.anyKey)))
                    .errorCode == "unsealFailed")
            #expect(
                try await register(Base64.encode(try SealedBox.seal(SecureBytes(zeros: 40), to: key))).errorCode
                    == "malformedRecord")
            #expect(
                try await register(Base64.encode(try SealedBox.seal(try backupShare.binary(), to: key))).errorCode
                    == "invalidParameters")
            #expect(
                try await register(Base64.encode(try SealedBox.seal(try signing[0].binary(), to: key))).errorCode
                    == "invalidParameters")
        }
    }

    @Test("random mutations of valid requests never reach a 5xx")
    func mutationFuzz() async throws {
        try await TestWorld.with(.sqlite) { world in
            let samples = try await samples(world)
            let random = DeterministicRandom(seed: Array("server fuzz".utf8))
            func next(_ bound: Int) -> Int {
                Int(random.bytes(count: 4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % UInt32(bound))
            }
            let alphabet = Array("{}[]\":,0123456789abcdef-+.eE\\u nulltruefalse/=".utf8) + [0x00, 0xFF, 0xC3, 0x80]
            for sample in samples {
                for _ in 0..<40 {
                    var body = sample.body
                    for _ in 0..<(1 + next(4)) {
                        guard !body.isEmpty else { break }
                        let position = next(body.count)
                        switch next(3) {
                        case 0: body[position] = alphabet[next(alphabet.count)]
                        case 1: body.insert(alphabet[next(alphabet.count)], at: position)
                        default: body.remove(at: position)
                        }
                    }
                    let response = try await world.send(sample.method, sample.path, body: body, headers: sample.headers)
                    #expect(response.status < 500)
                }
            }
        }
    }
}
