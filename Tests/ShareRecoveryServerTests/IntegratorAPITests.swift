import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The integrator backup API: cipherTexts per user and method, behind OTP tokens.
@Suite("Integrator API")
struct IntegratorAPITests {
    @Test("store, list, fetch and delete a cipherText with single-use tokens", arguments: TestBackend.allCases)
    func cipherTextLifecycle(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let user = "user-\(Hex.encode(SystemRandom().bytes(count: 4)))@example.com"
            let path = "/users/\(user.replacingAt)/user-backup-share?backupMethod=PASSWORD"
            let text = try Fixtures.cipherText(method: .password)

            let write = try await world.token(for: user, purpose: "addOrUpdateRecovery")
            #expect(
                try await world.send(
                    .PUT, path, json: .object([("cipherText", .string(text))]), headers: world.bearer(write)
                ).status == 204)

            let read = try await world.token(for: user, purpose: "recover")
            let methods = try await world.send(
                .GET, "/users/\(user.replacingAt)/recovery-methods", headers: world.bearer(read))
            #expect(methods.json?["methods"] == .array([.string("PASSWORD")]))
            let fetched = try await world.send(.GET, path, headers: world.bearer(read))
            #expect(fetched.status == 200 && fetched.string("cipherText") == text)
            // A read token is not single use.
            #expect(try await world.send(.GET, path, headers: world.bearer(read)).status == 200)
            #expect(
                try await world.send(
                    .GET, "/users/\(user.replacingAt)/user-backup-share?backupMethod=PASSKEY",
                    headers: world.bearer(read)
                ).errorCode == "notFound")

            let delete = try await world.token(for: user, purpose: "deleteRecovery")
            #expect(try await world.send(.DELETE, path, headers: world.bearer(delete)).status == 204)
            #expect(try await world.send(.GET, path, headers: world.bearer(read)).status == 404)
            #expect(
                try await world.send(.GET, "/users/\(user.replacingAt)/recovery-methods", headers: world.bearer(read))
                    .json?["methods"] == .array([]))

            // Deleting what is not there is a 404 that leaves the token unspent: it still deletes later.
            let second = try await world.token(for: user, purpose: "deleteRecovery")
            #expect(try await world.send(.DELETE, path, headers: world.bearer(second)).errorCode == "notFound")
            let again = try await world.token(for: user, purpose: "addOrUpdateRecovery")
            #expect(
                try await world.send(
                    .PUT, path, json: .object([("cipherText", .string(text))]), headers: world.bearer(again)
                ).status == 204)
            #expect(try await world.send(.DELETE, path, headers: world.bearer(second)).status == 204)
        }
    }

    @Test("a PUT validates the cipherText and its method, leaving the token unspent", arguments: TestBackend.allCases)
    func putValidatesCipherText(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let token = try await world.token(for: "validator", purpose: "addOrUpdateRecovery")
            let path = "/users/validator/user-backup-share?backupMethod=PASSWORD"
            let passkey = try Fixtures.cipherText(method: .passkey)
            let mismatch = try await world.send(
                .PUT, path, json: .object([("cipherText", .string(passkey))]), headers: world.bearer(token))
            #expect(mismatch.status == 400 && mismatch.errorCode == "unsupportedMethod")
            let garbage = try await world.send(
                .PUT, path, json: .object([("cipherText", .string("U1JDVA=="))]), headers: world.bearer(token))
            #expect(garbage.status == 400 && garbage.errorCode == "malformedCipherText")
            let notBase64 = try await world.send(
                .PUT, path, json: .object([("cipherText", .string("***"))]), headers: world.bearer(token))
            #expect(notBase64.status == 400)
            #expect(try await world.snapshot().isEmpty)
            // None of the refusals spent the token.
            let good = try await world.send(
                .PUT, "/users/validator/user-backup-share?backupMethod=PASSKEY",
                json: .object([("cipherText", .string(passkey))]),
                headers: world.bearer(token))
            #expect(good.status == 204)
        }
    }

    @Test("GET /health and GET /custodian/key", arguments: TestBackend.allCases)
    func healthAndKey(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            #expect(try await world.send(.GET, "/health").json == .object([("status", .string("ok"))]))
            let first = try await world.send(.GET, "/custodian/key", server: 0).string("publicKey")
            let second = try await world.send(.GET, "/custodian/key", server: 1).string("publicKey")
            // Two servers on one database share the custodian key generated by whichever started first.
            #expect(first != nil && first == second && first?.utf8.count == 64)
        }
    }
}

extension String {
    /// Percent-encodes `@` (the only reserved character the tests' user ids use).
    var replacingAt: String { split(separator: "@", omittingEmptySubsequences: false).joined(separator: "%40") }
}
