import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// On PostgreSQL the database's clock decides every expiry, rate-limit window and purge: servers whose own
/// clocks run an hour ahead or behind enforce exactly what an exact one does.
@Suite("Skewed process clocks on PostgreSQL")
struct SkewedClockTests {
    /// Server 0's clock is right, server 1's runs an hour ahead, server 2's an hour behind.
    static let skews: [Int64] = [0, 3_600, -3_600]
    static let ahead = 1
    static let behind = 2

    func spentTokens(_ world: TestWorld) async throws -> Int64 {
        let storage = try world.inspector()
        defer { Task { await storage.close() } }
        return try await storage.read { transaction in
            try await transaction.query("SELECT COUNT(*) AS n FROM spent_tokens", []).first!.integer("n")
        }
    }

    @Test("a process whose clock runs ahead purges no spent token early: reuse stays refused")
    func purgeAhead() async throws {
        try await TestWorld.with(
            .postgres, servers: 3, clockSkews: Self.skews, configure: { $0.flowCreationsPerPurge = 1 }
        ) { world in
            let user = "skew-\(Hex.encode(SystemRandom().bytes(count: 4)))@example.com"
            let path = "/users/\(user.replacingAt)/user-backup-share?backupMethod=PASSWORD"
            let body = JSONValue.object([("cipherText", .string(try Fixtures.cipherText(method: .password)))])
            let write = try await world.token(for: user, purpose: "addOrUpdateRecovery")
            #expect(try await world.send(.PUT, path, json: body, headers: world.bearer(write)).status == 204)
            #expect(try await spentTokens(world) == 1)

            // Every flow creation purges; by its own clock the token expired 50 minutes ago.
            _ = try await world.createFlow(identifier: "purger", server: Self.ahead)
            #expect(try await spentTokens(world) == 1)
            let reuse = try await world.send(.PUT, path, json: body, headers: world.bearer(write))
            #expect(reuse.status == 401 && reuse.errorCode == "unauthorized")

            // Once the database says the token has expired, the same purge removes it.
            world.clock.advance(seconds: 601)
            _ = try await world.createFlow(identifier: "purger", server: Self.ahead)
            #expect(try await spentTokens(world) == 0)
        }
    }

    @Test("a process whose clock runs behind neither resets a rate-limit window nor revives an expired flow")
    func windowBehind() async throws {
        let limits = ServerConfiguration.RateLimits(
            verifyPerIdentifier: .init(limit: 3, windowSeconds: 600),
            verifyPerAddress: .init(limit: 100, windowSeconds: 600),
            flowCreationPerIdentifier: .init(limit: 100, windowSeconds: 600),
            flowCreationPerAddress: .init(limit: 100, windowSeconds: 600))
        try await TestWorld.with(
            .postgres, servers: 3, clockSkews: Self.skews,
            configure: {
                $0.rateLimits = limits; $0.flowLifetimeSeconds = 3_600
            }
        ) { world in
            world.clock.alignToWindow(600)
            let flowId = try await world.createFlow(identifier: "gina")
            let code = try #require(world.otp.code(flowId: flowId))
            let wrong = code == "000000" ? "000001" : "000000"
            for server in [0, Self.ahead, 0] {
                let response = try await world.send(
                    .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(wrong))]),
                    server: server)
                #expect(response.status == 401 && response.errorCode == "wrongCode")
            }
            // By its own clock the process behind is six windows earlier: it still counts in the database's.
            let limited = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(code))]),
                server: Self.behind)
            #expect(limited.status == 429 && limited.errorCode == "rateLimited")
            let retryAfter = limited.headers.first { $0.0.lowercased() == "retry-after" }.flatMap { Int($0.1) }
            let left = Int(600 - world.clock.clock.now % 600)
            #expect(
                retryAfter.map { (left...left + 1).contains($0) } == true,
                "Retry-After \(String(describing: retryAfter))")
        }
    }

    @Test("a process whose clock runs behind honours the database's expiry of flows and tokens")
    func expiryBehind() async throws {
        try await TestWorld.with(.postgres, servers: 3, clockSkews: Self.skews) { world in
            let flowId = try await world.createFlow(identifier: "hugo", server: Self.ahead)
            let token = try await world.token(for: "hugo", purpose: "recover", server: Self.ahead)
            let path = "/users/hugo/recovery-methods"
            // Issued by the process ahead, yet valid everywhere for the database's ten minutes.
            #expect(try await world.send(.GET, path, headers: world.bearer(token), server: Self.behind).status == 200)
            world.clock.advance(seconds: 610)
            let late = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify",
                json: .object([("code", .string(try #require(world.otp.code(flowId: flowId))))]), server: Self.behind)
            #expect(late.status == 410 && late.errorCode == "flowEnded")
            let expired = try await world.send(.GET, path, headers: world.bearer(token), server: Self.behind)
            #expect(expired.status == 401 && expired.errorCode == "unauthorized")
        }
    }
}
