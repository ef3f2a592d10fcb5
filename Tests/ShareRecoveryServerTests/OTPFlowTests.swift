import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// OTP recovery flows: codes, tokens, attempt limits, expiry and rate limits.
@Suite("OTP flows")
struct OTPFlowTests {
    func verify(_ world: TestWorld, _ flowId: String, _ code: String, server: Int = 0) async throws -> APIResponse {
        try await world.send(
            .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string(code))]), server: server)
    }

    func wrong(_ code: String) -> String {
        let digits = String((Int(code)! + 1) % 1_000_000)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    @Test("create and verify with the code read from the file sender", arguments: TestBackend.allCases)
    func fileSenderFlow(backend: TestBackend) async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/otp.jsonl"
        try await TestWorld.with(backend, servers: 2, configure: { $0.otpSender = FileOTPSender(path: file) }) {
            world in
            let created = try await world.send(
                .POST, "/recovery/flows", json: .object([("identifier", .string("alice@example.com"))]), server: 0)
            #expect(created.status == 201)
            let flowId = try #require(created.string("flowId"))
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            let line = try #require(
                lines.compactMap { try? StrictJSON.parse(String($0)) }.first { $0["flowId"] == .string(flowId) })
            #expect(line["identifier"] == .string("alice@example.com"))
            guard case .string(let code)? = line["code"] else { Issue.record("no code in \(line)"); return }
            #expect(code.utf8.count == 6 && code.allSatisfy(\.isNumber))
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)

            // Verified on the other server: flows live in the database.
            let verified = try await verify(world, flowId, code, server: 1)
            #expect(verified.status == 200)
            #expect(verified.string("purpose") == "recover")
            #expect(verified.string("userId") == "alice@example.com")
            #expect(verified.string("token")?.hasPrefix("srt1.") == true)
            // A flow verifies once.
            #expect(try await verify(world, flowId, code).errorCode == "flowEnded")
        }
    }

    @Test("five wrong codes end the flow", arguments: TestBackend.allCases)
    func fiveWrongCodes(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let flowId = try await world.createFlow(identifier: "bob", purpose: "addOrUpdateRecovery")
            let code = try #require(world.otp.code(flowId: flowId))
            for attempt in 1...4 {
                let response = try await verify(world, flowId, wrong(code), server: attempt)
                #expect(response.status == 401 && response.errorCode == "wrongCode")
            }
            let fifth = try await verify(world, flowId, wrong(code))
            #expect(fifth.status == 410 && fifth.errorCode == "flowEnded")
            #expect(try await verify(world, flowId, code).status == 410)
            // Malformed codes are refused without counting, unknown flows are 404.
            let other = try await world.createFlow(identifier: "bob")
            #expect(try await verify(world, other, "12345").status == 400)
            #expect(try await verify(world, other, "abcdef").status == 400)
            #expect(try await verify(world, String(repeating: "0", count: 32), "123456").status == 404)
            #expect(try await verify(world, "not-a-flow", "123456").status == 404)
            #expect(try await verify(world, other, try #require(world.otp.code(flowId: other))).status == 200)
        }
    }

    @Test("flows and tokens expire", arguments: TestBackend.allCases)
    func expiry(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let flowId = try await world.createFlow(identifier: "carol")
            world.clock.advance(seconds: 601)
            let late = try await verify(world, flowId, try #require(world.otp.code(flowId: flowId)))
            #expect(late.status == 410 && late.errorCode == "flowEnded")

            let token = try await world.token(for: "carol", purpose: "recover")
            let path = "/users/carol/recovery-methods"
            #expect(try await world.send(.GET, path, headers: world.bearer(token)).status == 200)
            world.clock.advance(seconds: 590)
            #expect(try await world.send(.GET, path, headers: world.bearer(token)).status == 200)
            world.clock.advance(seconds: 20)
            let expired = try await world.send(.GET, path, headers: world.bearer(token))
            #expect(expired.status == 401 && expired.errorCode == "unauthorized")
        }
    }

    @Test("verification is rate limited per identifier and per address", arguments: TestBackend.allCases)
    func rateLimits(backend: TestBackend) async throws {
        let limits = ServerConfiguration.RateLimits(
            verifyPerIdentifier: .init(limit: 3, windowSeconds: 600),
            verifyPerAddress: .init(limit: 8, windowSeconds: 600),
            flowCreationPerIdentifier: .init(limit: 100, windowSeconds: 600),
            flowCreationPerAddress: .init(limit: 100, windowSeconds: 600))
        try await TestWorld.with(
            backend, servers: 2,
            configure: {
                $0.rateLimits = limits; $0.flowLifetimeSeconds = 3600
            }
        ) { world in
            world.clock.alignToWindow(600)
            // Per identifier, across flows and servers: the fourth attempt is refused even with the right code.
            let first = try await world.createFlow(identifier: "dave")
            let second = try await world.createFlow(identifier: "dave")
            let code = try #require(world.otp.code(flowId: second))
            #expect(try await verify(world, first, wrong(code), server: 0).status == 401)
            #expect(try await verify(world, first, wrong(code), server: 1).status == 401)
            #expect(try await verify(world, second, wrong(code), server: 0).status == 401)
            let limited = try await verify(world, second, code, server: 1)
            #expect(limited.status == 429 && limited.errorCode == "rateLimited")
            // Retry-After: the rest of the 600 s window (identifier's and address's alike).
            let retryAfter = limited.headers.first { $0.0.lowercased() == "retry-after" }.flatMap { Int($0.1) }
            let left = Int(600 - world.clock.clock.now % 600)
            #expect(
                retryAfter.map { (left...left + 1).contains($0) } == true,
                "Retry-After \(String(describing: retryAfter)), \(left) s left")

            // Another identifier still verifies, until the address limit (8 attempts in all) is reached.
            let erin = try await world.createFlow(identifier: "erin")
            #expect(try await verify(world, erin, try #require(world.otp.code(flowId: erin))).status == 200)
            var statuses: [Int] = []
            for index in 0..<4 {
                let flow = try await world.createFlow(identifier: "frank-\(index)")
                statuses.append(try await verify(world, flow, try #require(world.otp.code(flowId: flow))).status)
            }
            #expect(statuses == [200, 200, 200, 429])

            // A new window lets the identifier try again.
            world.clock.advance(seconds: 600)
            #expect(try await verify(world, second, code).status == 200)
        }
    }

    @Test("scaling multiplies the per-address limits only, saturating")
    func scalingPerAddress() {
        let standard = ServerConfiguration.RateLimits.standard
        let scaled = standard.scalingPerAddress(by: 3)
        #expect(scaled.verifyPerAddress.limit == standard.verifyPerAddress.limit * 3)
        #expect(scaled.flowCreationPerAddress.limit == standard.flowCreationPerAddress.limit * 3)
        #expect(scaled.verifyPerIdentifier == standard.verifyPerIdentifier)
        #expect(scaled.flowCreationPerIdentifier == standard.flowCreationPerIdentifier)
        #expect(scaled.verifyPerAddress.windowSeconds == standard.verifyPerAddress.windowSeconds)
        #expect(standard.scalingPerAddress(by: Int.max).verifyPerAddress.limit == Int.max)
        #expect(standard.scalingPerAddress(by: 0) == standard)
    }

    @Test("flow creation is rate limited and validates its input", arguments: TestBackend.allCases)
    func creation(backend: TestBackend) async throws {
        let limits = ServerConfiguration.RateLimits(
            verifyPerIdentifier: .init(limit: 10, windowSeconds: 600),
            verifyPerAddress: .init(limit: 10, windowSeconds: 600),
            flowCreationPerIdentifier: .init(limit: 2, windowSeconds: 600),
            flowCreationPerAddress: .init(limit: 100, windowSeconds: 600))
        try await TestWorld.with(backend, configure: { $0.rateLimits = limits }) { world in
            world.clock.alignToWindow(600)
            let grace = JSONValue.object([("identifier", .string("grace"))])
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await world.send(.POST, "/recovery/flows", json: grace).status) }
            #expect(statuses == [201, 201, 429])
            for bad: JSONValue in [
                .object([]), .object([("identifier", .string(""))]), .object([("identifier", .number("1"))]),
                .object([("identifier", .string("x")), ("purpose", .string("admin"))]),
                .object([("identifier", .string("x")), ("extra", .null)]), .array([]),
            ] {
                let response = try await world.send(.POST, "/recovery/flows", json: bad)
                #expect(response.status == 400)
            }
        }
    }
}
