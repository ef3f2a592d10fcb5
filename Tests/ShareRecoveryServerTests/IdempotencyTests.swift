import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// `Idempotency-Key` (docs/server.md, "Idempotent requests"): a keyed mutating request is applied at
/// most once, a repeat gets the first answer, and the key is claimed in the change's own transaction.
@Suite("Idempotent requests")
struct IdempotencyTests {
    static func key() -> String { Hex.encode(SystemRandom().bytes(count: 16)) }

    static func header(_ response: APIResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A backup session opened for a new 2-of-2 wallet of `clientId`, with its addOrUpdateRecovery token.
    static func openBackup(_ world: TestWorld, clientId: String) async throws
        -> (SessionClient, String, SessionClient.Opened)
    {
        let client = SessionClient(world: world, clientId: clientId)
        let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-\(clientId)")
        try await client.register(signing[1])
        let token = try await world.token(for: clientId, purpose: "addOrUpdateRecovery")
        return (
            client, token,
            try await client.open(purpose: "backup", method: .password, ownShare: signing[0], token: token)
        )
    }

    /// Answers to one keyed request sent several times at once: exactly one applied it (`status`, not
    /// replayed); every other got that answer replayed or 409 requestInProgress.
    static func expectAppliedOnce(
        _ answers: [APIResponse], status: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let applied = answers.filter { $0.status == status && header($0, "Idempotent-Replayed") == nil }
        #expect(applied.count == 1, "\(answers.map(\.status))", sourceLocation: sourceLocation)
        for answer in answers where answer.status != status {
            #expect(
                answer.status == 409 && answer.errorCode == "requestInProgress", "\(answer.text)",
                sourceLocation: sourceLocation)
        }
    }

    /// Rows in `idempotency_keys`, read through a second connection.
    static func keyRows(_ world: TestWorld) async throws -> Int {
        let storage = try world.inspector()
        defer { Task { await storage.close() } }
        return try await storage.read { transaction in
            try await transaction.query("SELECT COUNT(*) AS n FROM idempotency_keys", []).first!.integer("n")
        }.asInt
    }

    @Test(
        "a repeated PUT with its single-use token spent gets the first answer; a new key does not",
        arguments: TestBackend.allCases)
    func singleUseWriteReplays(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let path = "/users/idem-put/user-backup-share?backupMethod=PASSWORD"
            let body = JSONValue.object([("cipherText", .string(try Fixtures.cipherText(method: .password)))])
            let token = try await world.token(for: "idem-put", purpose: "addOrUpdateRecovery")
            let key = Self.key()
            let headers = world.bearer(token) + [("Idempotency-Key", key)]

            let first = try await world.send(.PUT, path, json: body, headers: headers)
            #expect(first.status == 204)
            #expect(Self.header(first, "Idempotent-Replayed") == nil)
            let repeated = try await world.send(.PUT, path, json: body, headers: headers)
            #expect(repeated.status == 204, "\(repeated.text)")
            #expect(Self.header(repeated, "Idempotent-Replayed") == "true")
            // Without the key's protection the token is spent, as before.
            let fresh = try await world.send(
                .PUT, path, json: body, headers: world.bearer(token) + [("Idempotency-Key", Self.key())])
            #expect(fresh.status == 401 && fresh.errorCode == "unauthorized", "\(fresh.text)")
        }
    }

    @Test(
        "a keyed /backup/fetch takes its key with its audit row: a repeat is replayed and served once",
        arguments: TestBackend.allCases)
    func keyedFetchReplays(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let headers = world.webhookHeaders + [("Idempotency-Key", Self.key())]
            let body = JSONValue.object([("clientId", .string("idem-fetch"))])
            let first = try await world.send(.POST, "/webhook/backup/fetch", json: body, headers: headers)
            #expect(first.status == 200 && Self.header(first, "Idempotent-Replayed") == nil, "\(first.text)")
            let repeated = try await world.send(.POST, "/webhook/backup/fetch", json: body, headers: headers)
            #expect(
                repeated.status == 200 && Self.header(repeated, "Idempotent-Replayed") == "true", "\(repeated.text)")
            // Had the row been joined into a batch (AuditBatches), no transaction would have taken the
            // key: the repeat would have run, and been served and audited, again.
            #expect(try await world.auditRows().filter { $0.event == "custodianSharesServed" }.count == 1)
            #expect(try await Self.keyRows(world) == 1)
        }
    }

    @Test("a verify whose answer was lost returns the same token again, once per key", arguments: TestBackend.allCases)
    func verifyReplaysItsToken(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let flowId = try await world.createFlow(identifier: "idem-verify", purpose: "recover")
            let code = try #require(world.otp.code(flowId: flowId))
            let body = JSONValue.object([("code", .string(code))])
            let key = Self.key()
            let first = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: body, headers: [("Idempotency-Key", key)])
            let token = try #require(first.string("token"))
            let repeated = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: body, headers: [("Idempotency-Key", key)])
            #expect(repeated.status == 200 && repeated.string("token") == token)
            #expect(Self.header(repeated, "Idempotent-Replayed") == "true")
            // The flow itself is used: a request that is not a repeat is refused as before.
            let other = try await world.send(.POST, "/recovery/flows/\(flowId)/verify", json: body)
            #expect(other.status == 410 && other.errorCode == "flowEnded", "\(other.text)")
            // The kept answer holds a token, so it is sealed: the token's bytes are nowhere in the row.
            let storage = try world.inspector()
            defer { Task { await storage.close() } }
            let rows = try await storage.read { try await $0.query("SELECT sealed_body FROM idempotency_keys", []) }
            #expect(rows.count == 1)
            for row in rows {
                let sealed = try row.blob("sealed_body")
                #expect(!Hex.encode(sealed).contains(Hex.encode(Array(token.utf8))))
            }
        }
    }

    @Test("a key used again for another body is 422 and changes nothing", arguments: TestBackend.allCases)
    func keyReuseIsRefused(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let path = "/users/idem-reuse/user-backup-share?backupMethod=PASSWORD"
            let first = try Fixtures.cipherText(method: .password)
            let second = try Fixtures.cipherText(method: .password)
            #expect(first != second)
            let token = try await world.token(for: "idem-reuse", purpose: "addOrUpdateRecovery")
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            #expect(
                try await world.send(.PUT, path, json: .object([("cipherText", .string(first))]), headers: headers)
                    .status == 204)
            let reused = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(second))]), headers: headers)
            #expect(reused.status == 422 && reused.errorCode == "idempotencyKeyReused", "\(reused.text)")
            let read = try await world.token(for: "idem-reuse", purpose: "recover")
            #expect(try await world.send(.GET, path, headers: world.bearer(read)).string("cipherText") == first)
            // The key comes before the route (openapi.yaml, IdempotencyKey): requests without credentials share a
            // scope, so a tokenless DELETE with the key of a flow creation is 422, and with a fresh key 401.
            let anonymous = [("Idempotency-Key", Self.key())]
            #expect(
                try await world.send(
                    .POST, "/recovery/flows", json: .object([("identifier", .string("idem-reuse"))]), headers: anonymous
                ).status == 201)
            #expect(try await world.send(.DELETE, path, headers: anonymous).status == 422)
            #expect(try await world.send(.DELETE, path, headers: [("Idempotency-Key", Self.key())]).status == 401)
        }
    }

    @Test(
        "a request that changed nothing frees its key: no row, and a repeat runs again",
        arguments: TestBackend.allCases)
    func refusalsLeaveNoRow(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let path = "/users/idem-bad/user-backup-share?backupMethod=PASSWORD"
            let token = try await world.token(for: "idem-bad", purpose: "addOrUpdateRecovery")
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            let bad = JSONValue.object([("cipherText", .string("AAAA"))])
            for _ in 0..<2 {
                let refused = try await world.send(.PUT, path, json: bad, headers: headers)
                #expect(refused.status == 400, "\(refused.text)")
                #expect(Self.header(refused, "Idempotent-Replayed") == nil)
            }
            #expect(try await Self.keyRows(world) == 0)
            // The same key then serves a good request (it was freed, so this is no reuse), and the token
            // was left unspent by the refusals.
            let good = JSONValue.object([("cipherText", .string(try Fixtures.cipherText(method: .password)))])
            #expect(try await world.send(.PUT, path, json: good, headers: headers).status == 204)
            // A malformed key is refused before anything runs.
            let malformed = try await world.send(
                .PUT, path, json: good, headers: world.bearer(token) + [("Idempotency-Key", "a key")])
            #expect(malformed.status == 400 && malformed.errorCode == "malformedInput")
        }
    }

    @Test(
        "identical keyed requests at once apply once; the others get that answer or are told to retry",
        arguments: TestBackend.allCases)
    func simultaneousRepeatsApplyOnce(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let path = "/users/idem-race/user-backup-share?backupMethod=PASSWORD"
            let body = JSONValue.object([("cipherText", .string(try Fixtures.cipherText(method: .password)))])
            let token = try await world.token(for: "idem-race", purpose: "addOrUpdateRecovery")
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            // The token is single use: a repeat that ran its route after the first had spent it, and
            // answered with its own refusal, would be a 401 here.
            let answers = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await world.send(.PUT, path, json: body, headers: headers) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            Self.expectAppliedOnce(answers, status: 204)
            let repeated = try await world.send(.PUT, path, json: body, headers: headers)
            #expect(repeated.status == 204 && Self.header(repeated, "Idempotent-Replayed") == "true")
            #expect(try await Self.keyRows(world) == 1)
        }
    }

    @Test(
        "a repeat that started before the first's change and ran after it answers as a repeat, not with its own refusal",
        arguments: TestBackend.allCases)
    func lateRepeatsAnswerAsRepeats(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let (client, token, session) = try await Self.openBackup(world, clientId: "idem-finish")
            // One body for all (the dealing's sealing is random), sent by repeats started a millisecond
            // apart: a repeat that looked at the key before the first finish committed, and read the
            // session after, finds it finished; its own answer would be 409 conflict.
            let body = JSONValue.object([("clientDealing", try client.outgoing(session))])
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            let answers = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await Task.sleep(for: .milliseconds(index))
                        return try await world.send(
                            .POST, "/recovery/sessions/\(session.sessionId)/finish", json: body, headers: headers)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            Self.expectAppliedOnce(answers, status: 200)
        }
    }

    @Test(
        "a refusal's audit row does not take the key: a repeat runs again, and the change then takes it",
        arguments: TestBackend.allCases)
    func refusalAuditsLeaveTheKeyFree(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let (client, token, session) = try await Self.openBackup(world, clientId: "idem-refused")
            let path = "/recovery/sessions/\(session.sessionId)/finish"
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            let audit = AuditWatcher(world: world)
            try await audit.skip()
            // A dealing that does not decode: refused inside the audited step, so a backupFailed row
            // is written, yet the refusal is not kept.
            let bad = JSONValue.object([("clientDealing", .object([]))])
            for _ in 0..<2 {
                let refused = try await world.send(.POST, path, json: bad, headers: headers)
                #expect(refused.status == 400, "\(refused.text)")
                #expect(Self.header(refused, "Idempotent-Replayed") == nil)
            }
            try await audit.appended([.backupFailed, .backupFailed], account: client.clientId)
            #expect(try await Self.keyRows(world) == 0)
            // The honest finish under the same key (another body, but the key is free) takes it.
            let body = JSONValue.object([("clientDealing", try client.outgoing(session))])
            #expect(try await world.send(.POST, path, json: body, headers: headers).status == 200)
            let repeated = try await world.send(.POST, path, json: body, headers: headers)
            #expect(repeated.status == 200 && Self.header(repeated, "Idempotent-Replayed") == "true")
        }
    }

    @Test(
        "the first change takes the key; a repeat meanwhile is in progress, a competing change rolls back, a retired key is taken again",
        arguments: TestBackend.allCases)
    func takingTheKey(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let storage = try world.inspector()
            defer { Task { await storage.close() } }
            let now = world.clock.clock.now
            let fingerprint = Array(repeating: UInt8(7), count: 32)
            @Sendable func claim(_ owner: String, at time: Int64) -> IdempotencyClaim {
                IdempotencyClaim(
                    scope: "scope", key: "k", fingerprint: fingerprint, owner: owner, now: time, leaseUntil: time + 60,
                    keepUntil: time + 86_400)
            }
            func state(at time: Int64, fingerprint: [UInt8] = fingerprint) async throws -> IdempotencyKeyState {
                try await storage.idempotencyKeyState(scope: "scope", key: "k", fingerprint: fingerprint, now: time)
            }
            /// A change (a row in `spent_tokens`) made under `claim`; whether its row is there after.
            func change(_ id: String, under claim: IdempotencyClaim) async throws -> Bool {
                do {
                    try await storage.transaction { transaction -> Void in
                        try await transaction.query(
                            "INSERT INTO spent_tokens (token_id, expires_at) VALUES (?, ?)", .text(id),
                            .integer(now + 600))
                        try await claim.markApplied(in: transaction)
                    }
                } catch let refusal as StorageRefusal {
                    #expect(refusal == .idempotencyKeyTaken)
                }
                return try await !storage.read {
                    try await $0.query("SELECT token_id FROM spent_tokens WHERE token_id = ?", [.text(id)])
                }.isEmpty
            }
            guard case .free = try await state(at: now) else { Issue.record("a new key"); return }
            let a = claim("a", at: now)
            #expect(try await change("a1", under: a))
            #expect(a.isWritten)
            guard case .inProgress = try await state(at: now + 1) else { Issue.record("applied, running"); return }
            guard case .mismatch = try await state(at: now + 1, fingerprint: [1]) else {
                Issue.record("another request"); return
            }
            // A repeat that ran at the same time: its change fails at the key and rolls back.
            let b = claim("b", at: now + 1)
            #expect(try await !change("b1", under: b))
            #expect(!b.isWritten)
            // a's second transaction takes its own key again.
            #expect(try await change("a2", under: a))
            // After a's lease the answer counts as lost; once kept, it is replayed.
            guard case .answerLost = try await state(at: now + 61) else { Issue.record("applied, lost"); return }
            try await storage.finishIdempotencyKey(a, status: 201, contentType: "application/json", sealedBody: [9])
            guard case .replay(let status, let contentType, let body) = try await state(at: now + 62) else {
                Issue.record("replay"); return
            }
            #expect(status == 201 && contentType == "application/json" && body == [9])
            // Past its retention the key is free, and the next change takes it.
            guard case .free = try await state(at: now + 86_400) else { Issue.record("expiry"); return }
            #expect(try await change("c1", under: claim("c", at: now + 86_400)))
            guard case .inProgress = try await state(at: now + 86_401) else { Issue.record("taken again"); return }
            // A claim that never wrote keeps nothing and frees nothing.
            let d = claim("d", at: now + 86_401)
            try await storage.finishIdempotencyKey(d, status: 400, contentType: nil, sealedBody: [])
            try await storage.releaseIdempotencyKey(d)
            guard case .inProgress = try await state(at: now + 86_401) else { Issue.record("untouched"); return }
        }
    }
}

extension Int64 {
    fileprivate var asInt: Int { Int(self) }
}
