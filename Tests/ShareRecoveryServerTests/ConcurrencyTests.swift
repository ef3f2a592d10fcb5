import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Many concurrent clients against two servers on one database: no lost or duplicated writes, no 5xx.
///
/// On PostgreSQL 64 clients of 200 requests each; SHARE_RECOVERY_CONCURRENT_REQUESTS sets the requests
/// per client (scripts/sanitizers.sh sets 50: the concurrency stays, the instrumented run is shorter).
@Suite("Concurrency")
struct ConcurrencyTests {
    static let postgresRequestsPerClient =
        ProcessInfo.processInfo.environment["SHARE_RECOVERY_CONCURRENT_REQUESTS"].flatMap { Int($0) }.map { max($0, 1) }
        ?? 200

    /// What one client expects the servers to hold for it (each client is sequential, so this is exact).
    struct Expected {
        var shares: [String: (setIndex: Int, byParty: [Int: String])] = [:]
        var cipherTexts: [String: String] = [:]
        var allShares: Set<String> { Set(shares.values.flatMap { $0.byParty.values }) }
    }

    struct Pools: Sendable {
        /// method name → sets → parties 2…4 JSON.
        let shares: [String: [[String]]]
        /// api name → cipherTexts.
        let cipherTexts: [String: [String]]
    }

    static func pools() throws -> Pools {
        let key = Fixtures.anyKey
        var shares: [String: [[String]]] = [:]
        for method in [BackupMethod.password, .passkey] {
            shares[method.name] = try (0..<3).map { _ in
                try Fixtures.custodianShares(custodianKey: key, method: method, parties: 4)
            }
        }
        var texts: [String: [String]] = [:]
        for method in [BackupMethod.password, .passkey, .iCloud] {
            texts[method.apiName] = try (0..<3).map { _ in try Fixtures.cipherText(method: method) }
        }
        return Pools(shares: shares, cipherTexts: texts)
    }

    @Test("concurrent clients × mixed requests on two servers sharing the database", arguments: TestBackend.allCases)
    func mixedLoad(backend: TestBackend) async throws {
        let (clients, requestsPerClient) = backend == .postgres ? (64, Self.postgresRequestsPerClient) : (16, 50)
        let unlimited = ServerConfiguration.RateLimit(limit: 1_000_000, windowSeconds: 3600)
        let pools = try Self.pools()
        let writes = Counter()
        try await TestWorld.with(
            backend, servers: 2,
            configure: {
                $0.rateLimits = .init(
                    verifyPerIdentifier: unlimited, verifyPerAddress: unlimited, flowCreationPerIdentifier: unlimited,
                    flowCreationPerAddress: unlimited)
            }
        ) { world in
            try await withThrowingTaskGroup(of: Expected.self) { group in
                for index in 0..<clients {
                    group.addTask {
                        try await runClient(
                            index, requests: requestsPerClient, world: world, pools: pools, writes: writes)
                    }
                }
                var totalShares = 0
                var totalTexts = 0
                for try await expected in group {
                    totalShares += expected.allShares.count
                    totalTexts += expected.cipherTexts.count
                }
                // Row counts: nothing duplicated, nothing lost, every successful single-use write spent one token.
                let storage = try world.inspector()
                let counts = try await storage.transaction { transaction in
                    [
                        try await transaction.query("SELECT COUNT(*) AS n FROM backup_shares", []).first!.integer("n"),
                        try await transaction.query("SELECT COUNT(*) AS n FROM cipher_texts", []).first!.integer("n"),
                        try await transaction.query("SELECT COUNT(*) AS n FROM spent_tokens", []).first!.integer("n"),
                    ]
                }
                await storage.close()
                #expect(counts == [Int64(totalShares), Int64(totalTexts), Int64(writes.value)])
            }
        }
    }

    final class Counter: Sendable {
        private let count = Locked(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    func runClient(_ index: Int, requests: Int, world: TestWorld, pools: Pools, writes: Counter) async throws
        -> Expected
    {
        let client = "load-\(index)"
        var expected = Expected()
        var sent = 0
        var state = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        let readToken = try await world.token(for: client, purpose: "recover", server: index)
        sent += 2
        while sent < requests {
            let server = next(2)
            switch next(7) {
            case 0, 1:
                let method = next(2) == 0 ? "password" : "passkey"
                let setIndex = next(3)
                let party = next(3)
                let share = pools.shares[method]![setIndex][party]
                let response = try await world.send(
                    .POST, "/webhook/backup",
                    json: .object([("clientId", .string(client)), ("backupShare", .string(share))]),
                    headers: world.webhookHeaders, server: server)
                #expect(response.status == 204)
                if expected.shares[method]?.setIndex == setIndex {
                    expected.shares[method]!.byParty[party] = share
                } else {
                    expected.shares[method] = (setIndex, [party: share])
                }
                sent += 1
            case 2:
                let response = try await world.send(
                    .POST, "/webhook/backup/fetch", json: .object([("clientId", .string(client))]),
                    headers: world.webhookHeaders,
                    server: server)
                guard case .array(let elements)? = response.json?["backupShares"] else {
                    Issue.record("fetch: \(response.text)")
                    break
                }
                let fetched = elements.compactMap { if case .string(let text) = $0 { text } else { nil } }
                #expect(fetched.count == Set(fetched).count && Set(fetched) == expected.allShares, "\(client) fetch")
                sent += 1
            case 3:
                let method = next(2) == 0 ? BackupMethod.password : .passkey
                let response = try await world.send(
                    .POST, "/webhook/backup/delete",
                    json: .object([("clientId", .string(client)), ("backupMethod", .string(method.apiName))]),
                    headers: world.webhookHeaders, server: server)
                #expect(response.status == 204)
                expected.shares[method.name] = nil
                sent += 1
            case 4:
                // A single-use token, and sometimes the same token raced to both servers at once.
                let apiName = ["PASSWORD", "PASSKEY", "ICLOUD"][next(3)]
                let text = pools.cipherTexts[apiName]![next(3)]
                let token = try await world.token(for: client, purpose: "addOrUpdateRecovery", server: server)
                let path = "/users/\(client)/user-backup-share?backupMethod=\(apiName)"
                let body = JSONValue.object([("cipherText", .string(text))])
                if next(2) == 0 {
                    async let first = world.send(.PUT, path, json: body, headers: world.bearer(token), server: 0)
                    async let second = world.send(.PUT, path, json: body, headers: world.bearer(token), server: 1)
                    let statuses = [try await first.status, try await second.status].sorted()
                    #expect(statuses == [204, 401], "\(client): double spend \(statuses)")
                    sent += 4
                } else {
                    #expect(
                        try await world.send(.PUT, path, json: body, headers: world.bearer(token), server: server)
                            .status == 204)
                    sent += 3
                }
                writes.increment()
                expected.cipherTexts[apiName] = text
            case 5:
                let methods = try await world.send(
                    .GET, "/users/\(client)/recovery-methods", headers: world.bearer(readToken), server: server)
                let order = ["PASSWORD", "PASSKEY", "ICLOUD"]
                #expect(
                    methods.json?["methods"]
                        == .array(order.filter { expected.cipherTexts[$0] != nil }.map { .string($0) }))
                let apiName = order[next(3)]
                let fetched = try await world.send(
                    .GET, "/users/\(client)/user-backup-share?backupMethod=\(apiName)",
                    headers: world.bearer(readToken), server: server)
                if let text = expected.cipherTexts[apiName] {
                    #expect(fetched.status == 200 && fetched.string("cipherText") == text)
                } else {
                    #expect(fetched.status == 404)
                }
                sent += 2
            default:
                #expect(
                    try await world.send(.GET, next(2) == 0 ? "/health" : "/custodian/key", server: server).status
                        == 200)
                sent += 1
            }
        }
        return expected
    }
}
