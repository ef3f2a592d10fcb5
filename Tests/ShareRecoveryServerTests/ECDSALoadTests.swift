import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// ECDSA with the custodian under load (issue 37, item 4): 64 devices make their wallet and pair
/// setup and sign at once, through two servers on one database. Every signature verifies under its
/// wallet's key, no request is answered with a 5xx (the servers' own request counters, which also
/// see what a client's retry hid), and the database shows each round state used once: one session
/// row per signature, each done with its state deleted, one `ecdsaSigned` row per session, and no
/// two signatures with one nonce (their r values all differ).
///
/// SHARE_RECOVERY_ECDSA_LOAD_CLIENTS sets the devices (64 by default; 8 under the sanitizers) and
/// SHARE_RECOVERY_ECDSA_LOAD_SIGNATURES the signatures per device (2 by default).
@Suite("ECDSA under load: concurrent devices sign with the custodian")
struct ECDSALoadTests {
    static let clients =
        ProcessInfo.processInfo.environment["SHARE_RECOVERY_ECDSA_LOAD_CLIENTS"].flatMap { Int($0) } ?? 64
    static let signatures =
        ProcessInfo.processInfo.environment["SHARE_RECOVERY_ECDSA_LOAD_SIGNATURES"].flatMap { Int($0) } ?? 2

    /// One signature a device made: whose, over what, and its r.
    struct Made: Sendable {
        let user: String
        let digest: String
        let r: String
    }

    @Test(
        "64 devices sign ECDSA at once through two servers: every signature verifies, no 5xx, each round state used once",
        .timeLimit(.minutes(20)), arguments: TestBackend.allCases)
    func concurrentSigning(backend: TestBackend) async throws {
        let scrape = ECDSASessionTests.scrapeToken()
        // What this test checks is that nothing is lost or used twice, not latency: 64 pair setups on a
        // busy 2-core machine queue far past the client's default 10 s.
        let transport = HTTPTransport(configuration: .init(timeout: .seconds(300), attemptTimeout: .seconds(150)))
        try await TestWorld.with(backend, servers: 2, configure: ECDSASessionTests.metricsOn(scrape)) { world in
            let started = Date()
            let made = try await withThrowingTaskGroup(of: [Made].self) { group in
                for index in 0..<Self.clients {
                    group.addTask {
                        let user = "ecdsa-load-\(index)"
                        let token = try await world.token(for: user, purpose: "sign", server: index % 2)
                        func client(_ server: Int) -> HTTPWalletClient {
                            HTTPWalletClient(
                                baseURL: world.servers[server % 2].baseURL(), tokenProvider: { _ in token },
                                transport: transport)
                        }
                        let device = try await client(index).createWallet(
                            clientId: user, walletId: "w-\(index)", curve: .secp256k1)
                        let setup = try await client(index + 1).makePairSetup(share: device, clientId: user)
                        var made: [Made] = []
                        for round in 0..<Self.signatures {
                            let digest = ECDSASessionTests.digest("device \(index) signature \(round)")
                            let signature = try await client(index + round).signECDSA(
                                share: device, setup: setup, clientId: user, digest: digest)
                            #expect(signature.isValid(digest: digest, publicKey: device.publicKey), "\(user) \(round)")
                            #expect(try signature.recoverPublicKey(digest: digest) == device.publicKey)
                            made.append(Made(user: user, digest: Hex.encode(digest), r: Hex.encode(signature.r)))
                        }
                        #expect(!setup.isDiscarded, "\(user)")
                        return made
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(made.count == Self.clients * Self.signatures)
            // No nonce twice: r is the x of the signature's nonce point.
            #expect(Set(made.map(\.r)).count == made.count)

            // One session per signature, each done with its round state deleted.
            let sessions = try await ECDSAWire.signingSessions(world: world)
            #expect(sessions.count == made.count, "\(sessions.count) sessions for \(made.count) signatures")
            #expect(Set(sessions.map(\.id)).count == sessions.count)
            #expect(
                Set(sessions.map { "\($0.clientId) \($0.digest)" }) == Set(made.map { "\($0.user) \($0.digest)" }))
            let unfinished = sessions.filter { $0.state != "done" || $0.sealedStateCount != 0 }
            #expect(unfinished.isEmpty, "\(unfinished)")
            // Each session signed once, and nothing aborted.
            let signed = try await ECDSAWire.auditedSessions(world: world, event: "ecdsaSigned")
            #expect(signed.count == made.count && Set(signed) == Set(sessions.map(\.id)))
            #expect(try await ECDSAWire.auditedSessions(world: world, event: "ecdsaAborted").isEmpty)
            let setups = try await world.auditRows().filter { $0.event == "ecdsaPairSetupMade" }
            #expect(setups.count == Self.clients)
            for index in [0, Self.clients - 1] {
                #expect(try await ECDSAWire.keptSetups(world: world, userId: "ecdsa-load-\(index)").count == 1)
            }
            let storage = try world.inspector()
            let verified = try await AuditTrail.verify(storage)
            await storage.close()
            #expect(verified.count == Int64(try await world.auditRows().count))

            // The servers' own counters: no 5xx at all, and each round answered once per signature.
            var statuses: [String: Double] = [:]
            var rounds: [String: Double] = [:]
            for server in 0..<2 {
                let scraped = try await world.send(
                    .GET, "/metrics", headers: world.bearer(scrape), server: server, checkSpec: false)
                for sample in OperationsTests.samples(scraped.text) where sample.name == "http_server_requests_total" {
                    statuses[sample.labels["status"] ?? "?", default: 0] += sample.value
                    guard let route = sample.labels["route"], route.hasPrefix("/wallets/ecdsa/signing-sessions")
                    else { continue }
                    let step = route.split(separator: "/").last.map(String.init) ?? route
                    rounds["\(step) \(sample.labels["status"] ?? "?")", default: 0] += sample.value
                }
            }
            #expect(statuses.filter { $0.key.hasPrefix("5") }.isEmpty, "\(statuses)")
            let expected = Double(made.count)
            #expect(
                rounds == ["signing-sessions 201": expected, "round2 200": expected, "round3 200": expected],
                "\(rounds)")
            print(
                "ECDSALoadTests: backend \(backend), \(Self.clients) devices, \(made.count) signatures "
                    + String(format: "in %.1f s", elapsed) + ", statuses \(statuses.sorted { $0.key < $1.key })")
        }
    }
}
