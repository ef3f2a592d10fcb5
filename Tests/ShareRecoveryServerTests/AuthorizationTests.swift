import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// Every protected route refuses missing, forged, expired, misdirected and spent credentials with 401/403,
/// and nothing stored changes.
@Suite("Authorisation")
struct AuthorizationTests {
    struct Route {
        let name: String
        let method: HTTPMethod
        let path: String
        let body: JSONValue?
        /// The purpose a valid token needs (`nil`: any).
        let purpose: TokenPurpose?
        let singleUse: Bool
        /// Whose resource the route touches: valid tokens are minted for this user.
        var user = "victim"
    }

    @Test("token routes refuse bad tokens and change nothing", arguments: TestBackend.allCases)
    func tokenRoutes(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let authority = TokenAuthority(key: try DerivedKeys(masterKey: world.masterKey).token)
            let now = world.clock.clock.now
            func mint(_ user: String, _ purpose: TokenPurpose, issuedAt: Int64? = nil) -> String {
                authority.issue(userId: user, purpose: purpose, now: issuedAt ?? now, lifetime: 600).text
            }
            let user = "victim"
            // State to protect: a cipherText, a registered signing share, an open and a finished session
            // (of two accounts: one account has one session at a time).
            let client = SessionClient(world: world, clientId: user)
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-auth")
            try await client.register(signing[1])
            let other = SessionClient(world: world, clientId: "victim-2")
            let otherSigning = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-auth-2")
            try await other.register(otherSigning[1])
            let text = try Fixtures.cipherText(method: .password)
            let path = "/users/\(user)/user-backup-share?backupMethod=PASSWORD"
            #expect(
                try await world.send(
                    .PUT, path, json: .object([("cipherText", .string(text))]),
                    headers: world.bearer(mint(user, .addOrUpdateRecovery))
                ).status == 204)
            let sessionToken = mint(user, .addOrUpdateRecovery)
            let open = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: sessionToken)
            let otherToken = mint(other.clientId, .addOrUpdateRecovery)
            let done = try await other.open(
                purpose: "backup", method: .passkey, ownShare: otherSigning[0], token: otherToken)
            #expect(try await other.finish(done, token: otherToken).status == 200)
            let openBody = JSONValue.object([
                ("clientId", .string(user)), ("purpose", .string("backup")), ("backupMethod", .string("PASSWORD")),
                ("clientShare", signing[0].jsonValue(includingSecret: false)),
                ("clientKey", .string(Hex.encode(Fixtures.anyKey))),
            ])

            let deleteUser = "\(user)-deleting"
            let deletePath = "/users/\(deleteUser)/user-backup-share?backupMethod=PASSWORD"
            let routes = [
                Route(
                    name: "put", method: .PUT, path: path, body: .object([("cipherText", .string(text))]),
                    purpose: .addOrUpdateRecovery, singleUse: true),
                Route(name: "get", method: .GET, path: path, body: nil, purpose: .recover, singleUse: false),
                // Another user of the same integrator: this one's open session would refuse a delete
                // (operationInProgress), and the route's credentials are what is tested here.
                Route(
                    name: "delete", method: .DELETE, path: deletePath, body: nil, purpose: .deleteRecovery,
                    singleUse: true,
                    user: deleteUser),
                Route(
                    name: "methods", method: .GET, path: "/users/\(user)/recovery-methods", body: nil, purpose: nil,
                    singleUse: false),
                Route(
                    name: "open", method: .POST, path: "/recovery/sessions", body: openBody,
                    purpose: .addOrUpdateRecovery, singleUse: false),
                Route(
                    name: "finish", method: .POST, path: "/recovery/sessions/\(open.sessionId)/finish",
                    body: .object([("clientDealing", try client.outgoing(open))]), purpose: .addOrUpdateRecovery,
                    singleUse: false),
                Route(
                    name: "confirm", method: .POST, path: "/recovery/sessions/\(done.sessionId)/confirm", body: nil,
                    purpose: .addOrUpdateRecovery, singleUse: false, user: other.clientId),
                Route(
                    name: "abort", method: .DELETE, path: "/recovery/sessions/\(open.sessionId)", body: nil,
                    purpose: .addOrUpdateRecovery, singleUse: false),
            ]
            let otherKey = TokenAuthority(key: SystemRandom().secureBytes(count: 32))
            for (offset, route) in routes.enumerated() {
                let purpose = route.purpose ?? .recover
                let valid = mint(route.user, purpose)
                var tampered = Array(valid.utf8)
                tampered[tampered.count - 1] =
                    tampered.last == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
                var unauthorised: [(String, [(String, String)])] = [
                    ("no token", []),
                    ("not bearer", [("Authorization", "Basic \(valid)")]),
                    ("garbage", world.bearer("garbage")),
                    ("tampered", world.bearer(String(decoding: tampered, as: UTF8.self))),
                    ("expired", world.bearer(mint(route.user, purpose, issuedAt: now - 601))),
                    (
                        "other server key",
                        world.bearer(otherKey.issue(userId: route.user, purpose: purpose, now: now, lifetime: 600).text)
                    ),
                    ("two tokens", world.bearer(valid) + world.bearer(valid)),
                ]
                var forbidden: [(String, [(String, String)])] = [
                    ("other user", world.bearer(mint("someone-else", purpose)))
                ]
                if let needed = route.purpose {
                    for wrong in TokenPurpose.allCases where wrong != needed {
                        forbidden.append(("purpose \(wrong)", world.bearer(mint(route.user, wrong))))
                    }
                }
                if route.singleUse {
                    // Spend a token with the real write on another user's data, then reuse it here.
                    let spent = mint(route.user, purpose)
                    if route.method == .PUT {
                        #expect(
                            try await world.send(
                                route.method, route.path, json: route.body!, headers: world.bearer(spent)
                            )
                            .status == 204)
                    } else {
                        #expect(
                            try await world.send(
                                .PUT, route.path, json: .object([("cipherText", .string(text))]),
                                headers: world.bearer(mint(route.user, .addOrUpdateRecovery))
                            ).status == 204)
                        let deleted = try await world.send(.DELETE, route.path, headers: world.bearer(spent))
                        #expect(deleted.status == 204, "\(deleted.status) \(deleted.text)")
                        #expect(
                            try await world.send(
                                .PUT, route.path, json: .object([("cipherText", .string(text))]),
                                headers: world.bearer(mint(route.user, .addOrUpdateRecovery))
                            ).status == 204)
                    }
                    unauthorised.append(("reused", world.bearer(spent)))
                }
                let reference = try await world.snapshot()
                for (label, headers) in unauthorised {
                    let response = try await send(world, route, headers: headers, server: offset)
                    #expect(
                        response.status == 401 && response.errorCode == "unauthorized",
                        "\(route.name) with \(label): \(response.text)")
                }
                for (label, headers) in forbidden {
                    let response = try await send(world, route, headers: headers, server: offset + 1)
                    #expect(
                        response.status == 403 && response.errorCode == "forbidden",
                        "\(route.name) with \(label): \(response.text)")
                }
                let after = try await world.snapshot()
                #expect(after == reference, "\(route.name) changed state")
            }
        }
    }

    func send(_ world: TestWorld, _ route: Route, headers: [(String, String)], server: Int) async throws -> APIResponse
    {
        if let body = route.body {
            return try await world.send(route.method, route.path, json: body, headers: headers, server: server)
        }
        return try await world.send(route.method, route.path, headers: headers, server: server)
    }

    @Test("webhook routes refuse a missing or wrong secret and change nothing", arguments: TestBackend.allCases)
    func webhookRoutes(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let share = try Fixtures.custodianShares(custodianKey: Fixtures.anyKey)[0]
            #expect(
                try await world.send(
                    .POST, "/webhook/backup",
                    json: .object([("clientId", .string("c")), ("backupShare", .string(share))]),
                    headers: world.webhookHeaders
                ).status == 204)
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-hook")
            let keyText = try #require(try await world.send(.GET, "/custodian/key").string("publicKey"))
            let key = try #require(Hex.decode(keyText))
            let sealed = Base64.encode(try SealedBox.seal(try signing[1].binary(), to: key))
            let requests: [(String, JSONValue)] = [
                (
                    "/webhook/backup",
                    .object([
                        ("clientId", .string("c")),
                        ("backupShare", .string(try Fixtures.custodianShares(custodianKey: Fixtures.anyKey)[0])),
                    ])
                ),
                ("/webhook/backup/fetch", .object([("clientId", .string("c"))])),
                (
                    "/webhook/backup/delete",
                    .object([("clientId", .string("c")), ("backupMethod", .string("PASSWORD"))])
                ),
                ("/custodian/wallets", .object([("clientId", .string("c")), ("sealedShare", .string(sealed))])),
            ]
            let before = try await world.snapshot()
            let secrets: [[(String, String)]] = [
                [], [("X-Webhook-Secret", "")], [("X-Webhook-Secret", "wrong")],
                [("X-Webhook-Secret", world.webhookSecret.uppercased())],
                [("X-Webhook-Secret", world.webhookSecret + "x")],
                [("X-Webhook-Secret", String(world.webhookSecret.dropLast()))],
                [("X-Webhook-Secret", world.webhookSecret), ("X-Webhook-Secret", world.webhookSecret)],
                world.bearer(world.webhookSecret),
            ]
            for (path, body) in requests {
                for headers in secrets {
                    let response = try await world.send(.POST, path, json: body, headers: headers)
                    #expect(
                        response.status == 401 && response.errorCode == "unauthorized", "\(path) \(headers.map(\.0))")
                }
            }
            // fetch with a wrong secret must not leak the stored share either.
            #expect(try await world.snapshot() == before)
        }
    }
}
