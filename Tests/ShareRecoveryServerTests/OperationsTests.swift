import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// What an operator runs against the server: the liveness and readiness probes, and the Prometheus
/// metrics, on both backends.
@Suite("Operations: probes and metrics")
struct OperationsTests {
    /// A GET outside ``TestWorld/send``, which treats every 5xx as a failure: /ready's 503 is an answer.
    static func get(_ world: TestWorld, _ path: String, headers: [(String, String)] = []) async throws -> APIResponse {
        var request = HTTPClientRequest(url: world.servers[0].baseURL() + path)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await TestHTTP.client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return APIResponse(
            status: Int(response.status.code), body: Array(body.readableBytesView),
            headers: response.headers.map { ($0.name, $0.value) })
    }

    @Test(
        "/health is up; /ready is 200 only while the database answers and holds every migration",
        arguments: TestBackend.allCases)
    func probes(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            #expect(try await world.send(.GET, "/health").json == .object([("status", .string("ok"))]))
            #expect(try await world.send(.GET, "/ready").json == .object([("status", .string("ready"))]))

            // A database that lost its newest migration is not ready: traffic must go elsewhere.
            let inspector = try world.inspector()
            let newest = Int64(Migrations.all.count)
            _ = try await inspector.transaction {
                try await $0.query("DELETE FROM schema_migrations WHERE version = ?", .integer(newest))
            }
            let lacking = try await Self.get(world, "/ready")
            #expect(lacking.status == 503 && lacking.errorCode == "notReady", "\(lacking.text)")
            #expect(lacking.text.contains("lacks 1 migration"))
            #expect(OpenAPISpec.shared.check(method: "GET", path: "/ready", status: 503, body: lacking.body).isEmpty)
            // Liveness does not depend on the database.
            #expect(try await world.send(.GET, "/health").status == 200)

            _ = try await inspector.transaction {
                try await $0.query("INSERT INTO schema_migrations (version) VALUES (?)", .integer(newest))
            }
            #expect(try await world.send(.GET, "/ready").status == 200)

            // A database that is gone altogether (the schema dropped) is not ready either.
            _ = try await inspector.transaction { try await $0.query("DROP TABLE schema_migrations") }
            await inspector.close()
            let gone = try await Self.get(world, "/ready")
            #expect(
                gone.status == 503 && gone.errorCode == "notReady" && gone.text.contains("cannot be reached"),
                "\(gone.text)")
        }
    }

    @Test("/metrics is off (404) unless a metrics token is configured", arguments: TestBackend.allCases)
    func metricsOffByDefault(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let off = try await world.send(.GET, "/metrics", headers: world.bearer("any token at all, 16+"))
            #expect(off.status == 404 && off.errorCode == "notFound")
        }
    }

    @Test(
        "/metrics counts requests by route template and status, sessions by outcome and reason, OTP attempts, and names no user",
        arguments: TestBackend.allCases)
    func metricsCount(backend: TestBackend) async throws {
        let scrapeToken = Hex.encode(SystemRandom().bytes(count: 16))
        try await TestWorld.with(
            backend, configure: { $0.metricsToken = .value(SecureBytes(copying: Array(scrapeToken.utf8))) }
        ) {
            world in
            let refused = try await world.send(.GET, "/metrics", headers: world.bearer(scrapeToken + "x"))
            #expect(refused.status == 401 && refused.errorCode == "unauthorized")
            #expect(try await world.send(.GET, "/metrics").status == 401)

            // One backup session to its confirm, one recovery refused at open, one wrong code.
            let client = SessionClient(world: world, clientId: "metrics-user-7f3a")
            let signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-metrics")
            try await client.register(signing[1])
            let addToken = try await world.token(for: client.clientId, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(
                purpose: "backup", method: .password, ownShare: signing[0], token: addToken)
            #expect(try await client.finish(backup, token: addToken).status == 200)
            #expect(try await client.confirm(backup.sessionId, token: addToken).status == 204)
            let recoverToken = try await world.token(for: client.clientId, purpose: "recover")
            let stranger = try Fixtures.backupSet()[0]
            let refusedOpen = try await client.openResponse(
                purpose: "recovery", method: .password, ownShare: stranger, token: recoverToken)
            #expect(refusedOpen.status == 404 && refusedOpen.errorCode == "noMatchingShare")
            let flowId = try await world.createFlow(identifier: client.clientId)
            let wrong = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: .object([("code", .string("000000"))]))
            #expect(wrong.status == 401 || wrong.status == 200)

            let scraped = try await world.send(.GET, "/metrics", headers: world.bearer(scrapeToken), checkSpec: false)
            #expect(scraped.status == 200)
            #expect(
                scraped.headers.contains {
                    $0.0.lowercased() == "content-type" && $0.1.hasPrefix("text/plain; version=0.0.4")
                })
            let samples = Self.samples(scraped.text)
            func value(_ name: String, _ labels: [String: String]) -> Double {
                samples.filter { sample in
                    sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
                }
                .map(\.value).reduce(0, +)
            }
            #expect(value("share_recovery_sessions_total", ["protocol": "backup", "event": "started"]) == 1)
            #expect(value("share_recovery_sessions_total", ["protocol": "backup", "event": "completed"]) == 1)
            #expect(
                value(
                    "share_recovery_sessions_total",
                    ["protocol": "recovery", "event": "failed", "reason": "noMatchingShare"]) == 1)
            #expect(value("share_recovery_sessions_total", ["protocol": "recovery", "event": "started"]) == 0)
            // Two tokens issued by verified codes, and one wrong code (000000 is right once in a million).
            #expect(
                value("share_recovery_otp_attempts_total", ["outcome": "verified"]) == (wrong.status == 200 ? 3 : 2))
            #expect(
                value("share_recovery_otp_attempts_total", ["outcome": "wrongCode"]) == (wrong.status == 401 ? 1 : 0))
            #expect(
                value("http_server_requests_total", ["route": "/recovery/sessions", "method": "POST", "status": "201"])
                    == 1)
            #expect(
                value("http_server_requests_total", ["route": "/recovery/sessions", "method": "POST", "status": "404"])
                    == 1)
            #expect(
                value("http_server_requests_total", ["route": "/recovery/flows/{flowId}/verify", "method": "POST"]) == 3
            )
            #expect(value("http_server_requests_total", ["route": "/metrics", "status": "401"]) == 2)
            #expect(
                value("http_server_request_duration_seconds_count", ["route": "/recovery/sessions", "method": "POST"])
                    == 2)
            #expect(samples.contains { $0.name == "share_recovery_database_operations_in_flight" })
            // Route templates, never concrete paths: the user id and session ids appear nowhere.
            #expect(
                !scraped.text.contains(client.clientId) && !scraped.text.contains(backup.sessionId)
                    && !scraped.text.contains(flowId))
            #expect(!scraped.text.contains(scrapeToken) && !scraped.text.contains(addToken))
        }
    }

    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    /// The samples of a Prometheus text exposition (`name{a="x",b="y"} value`), comments skipped.
    static func samples(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                let value = Double(line[line.index(after: space)...])
            else { return nil }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                return Sample(name: String(series), labels: [:], value: value)
            }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",")
            {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }
}
