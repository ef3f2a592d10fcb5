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

    /// Rows in `idempotency_keys`, read through a second connection.
    static func keyRows(_ world: TestWorld) async throws -> Int {
        let storage = try world.inspector()
        defer { Task { await storage.close() } }
        return try await storage.read { transaction in
            try await transaction.query("SELECT COUNT(*) AS n FROM idempotency_keys", []).first!.integer("n")
        }.asInt
    }

    @Test("a repeated PUT with its single-use token spent gets the first answer; a new key does not", arguments: TestBackend.available)
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

    @Test("a verify whose answer was lost returns the same token again, once per key", arguments: TestBackend.available)
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

    @Test("a key used again for another body is 422 and changes nothing", arguments: TestBackend.available)
    func keyReuseIsRefused(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let path = "/users/idem-reuse/user-backup-share?backupMethod=PASSWORD"
            let first = try Fixtures.cipherText(method: .password)
            let second = try Fixtures.cipherText(method: .password)
            #expect(first != second)
            let token = try await world.token(for: "idem-reuse", purpose: "addOrUpdateRecovery")
            let headers = world.bearer(token) + [("Idempotency-Key", Self.key())]
            #expect(try await world.send(.PUT, path, json: .object([("cipherText", .string(first))]), headers: headers).status == 204)
            let reused = try await world.send(.PUT, path, json: .object([("cipherText", .string(second))]), headers: headers)
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

    @Test("a request that changed nothing frees its key: no row, and a repeat runs again", arguments: TestBackend.available)
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

    @Test("a claim still running is in progress; a lapsed one is taken over and its late change refused", arguments: TestBackend.available)
    func leaseAndTakeover(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let storage = try world.inspector()
            defer { Task { await storage.close() } }
            let now = world.clock.clock.now
            let fingerprint = Array(repeating: UInt8(7), count: 32)
            @Sendable func claim(_ owner: String) -> IdempotencyClaim {
                IdempotencyClaim(scope: "scope", key: "k", owner: owner, keepUntil: now + 86_400)
            }
            func reserve(_ owner: String, at time: Int64, fingerprint: [UInt8] = fingerprint) async throws
                -> IdempotencyReservation
            {
                try await storage.reserveIdempotencyKey(
                    scope: "scope", key: "k", fingerprint: fingerprint, owner: owner, now: time, leaseUntil: time + 60)
            }
            guard case .proceed = try await reserve("a", at: now) else { Issue.record("first claim"); return }
            guard case .inProgress = try await reserve("b", at: now + 1) else { Issue.record("in progress"); return }
            guard case .mismatch = try await reserve("b", at: now + 1, fingerprint: [1]) else {
                Issue.record("another request"); return
            }
            // a's lease lapses; b takes the key over.
            guard case .proceed = try await reserve("b", at: now + 61) else { Issue.record("takeover"); return }
            // a's late change: its transaction fails at the claim and rolls back what it wrote.
            await #expect(throws: APIError.self) {
                try await storage.transaction { transaction -> Void in
                    try await transaction.query(
                        "INSERT INTO spent_tokens (token_id, expires_at) VALUES (?, ?)", .text("late"), .integer(now + 600))
                    try await claim("a").markApplied(in: transaction)
                }
            }
            let late = try await storage.read {
                try await $0.query("SELECT token_id FROM spent_tokens WHERE token_id = ?", [.text("late")])
            }
            #expect(late.isEmpty)
            // b's change commits with its claim. Until its answer is kept, a repeat is told to wait while
            // b's lease (from now + 61) runs, and that the answer was lost after it.
            try await storage.transaction { transaction -> Void in try await claim("b").markApplied(in: transaction) }
            guard case .inProgress = try await reserve("c", at: now + 120) else { Issue.record("applied, running"); return }
            guard case .answerLost = try await reserve("c", at: now + 122) else { Issue.record("applied, lost"); return }
            // b's answer is kept and replayed.
            try await storage.finishIdempotencyKey(claim("b"), status: 201, contentType: "application/json", sealedBody: [9])
            guard case .replay(let status, let contentType, let body) = try await reserve("c", at: now + 62) else {
                Issue.record("replay"); return
            }
            #expect(status == 201 && contentType == "application/json" && body == [9])
            // Past its retention the key is free again.
            guard case .proceed = try await reserve("d", at: now + 86_401) else { Issue.record("expiry"); return }
        }
    }
}

extension Int64 {
    fileprivate var asInt: Int { Int(self) }
}
