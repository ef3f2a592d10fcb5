import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing
import TestSupport

@testable import ShareRecoveryServer

/// ECDSA signatures with the custodian through the faulty network of ``FaultyNetworkTests`` (issue 37,
/// item 4): the device's three rounds go through a ``FaultProxy`` that resets connections, drops
/// answers after the server applied the request, and delays requests and answers past the client's
/// attempt timeout. Each signature either completes once (a valid signature, one session, one
/// `ecdsaSigned` row) or fails with a typed error; no round state is ever used twice (no session
/// signs twice, no two signatures share a nonce), and a fault never aborts, so the pair setup made
/// once signs every trial.
///
/// 200 signatures under CI (`CI=true`), 100 on each backend (one signature is three rounds of a
/// second or so of debug-build work, so 200 on each would cost CI about six minutes); 20 on each
/// otherwise. SHARE_RECOVERY_FAULT_TRIALS sets the count per backend, as for ``FaultyNetworkTests``,
/// and SHARE_RECOVERY_FAULT_SEED replays a run (the PostgreSQL backend's proxy draws from the seed + 1).
@Suite("ECDSA signing through a faulty network", .serialized)
struct ECDSAFaultyNetworkTests {
    /// How a trial ended, by the error's type and code.
    struct Outcome: Sendable {
        var signatures = 0
        var failures: [String: Int] = [:]
    }

    /// Both backends at once, as ``FaultyNetworkTests`` runs them: a trial waits out faults as much as it
    /// computes.
    @Test(.timeLimit(.minutes(20)))
    func everySignatureCompletesOnce() async throws {
        let seed =
            FaultyNetworkTests.environment["SHARE_RECOVERY_FAULT_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (offset, backend) in TestBackend.allCases.enumerated() {
                if backend == .postgres, TestBackend.postgresURL == nil {
                    Issue.record(TestBackend.postgresSkipped, severity: .warning)
                    continue
                }
                group.addTask { try await Self.signThroughFaults(backend: backend, seed: seed &+ UInt64(offset)) }
            }
            try await group.waitForAll()
        }
    }

    static func signThroughFaults(backend: TestBackend, seed: UInt64) async throws {
        let environment = FaultyNetworkTests.environment
        let trials =
            environment["SHARE_RECOVERY_FAULT_TRIALS"].flatMap { Int($0) } ?? (environment["CI"] == "true" ? 100 : 20)
        print(
            "ECDSAFaultyNetworkTests: backend \(backend), \(trials) signatures, seed \(seed) "
                + "(SHARE_RECOVERY_FAULT_SEED replays it)")
        let started = Date()
        var lifetime = 0
        try await TestWorld.with(
            backend,
            configure: {
                WalletSessionTests.unlimitedFlows(&$0)
                lifetime = $0.sessionLifetimeSeconds
            }
        ) { world in
            let user = "ecdsa-faulty-\(backend)"
            // The wallet and its pair setup are made directly: the faults are for the signatures.
            let first = try await world.token(for: user, purpose: "sign")
            let direct = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in first })
            let device = try await direct.createWallet(clientId: user, walletId: "w", curve: .secp256k1)
            let setup = try await direct.makePairSetup(share: device, clientId: user)

            let proxy = try FaultProxy(upstreamPort: world.servers[0].port, seed: seed)
            defer { proxy.stop() }
            // The policy of FaultyNetworkTests: 12 attempts of 250 ms, which a fault cannot exhaust in practice.
            let transport = HTTPTransport(
                configuration: .init(
                    timeout: .seconds(30), attemptTimeout: .milliseconds(250), maximumAttempts: 12,
                    initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50)))
            var outcome = Outcome()
            var nonces: Set<String> = []
            var completed: Set<String> = []
            for trial in 0..<trials {
                // A token per trial: a trial that failed may have moved the clock past the last one's life.
                let token = try await world.token(for: user, purpose: "sign")
                let client = HTTPWalletClient(
                    baseURL: "http://127.0.0.1:\(proxy.port)", tokenProvider: { _ in token }, transport: transport)
                let digest = ECDSASessionTests.digest("faulty \(backend) \(seed) \(trial)")
                var signed = false
                do {
                    let signature = try await client.signECDSA(
                        share: device, setup: setup, clientId: user, digest: digest)
                    #expect(
                        signature.isValid(digest: digest, publicKey: device.publicKey), "trial \(trial), seed \(seed)")
                    #expect(nonces.insert(Hex.encode(signature.r)).inserted, "trial \(trial), seed \(seed): r twice")
                    outcome.signatures += 1
                    signed = true
                } catch let error as ShareRecoveryError {
                    outcome.failures["\(error.code)", default: 0] += 1
                } catch let error as TransportError {
                    outcome.failures["transport \(error.code)", default: 0] += 1
                }
                // The server's side: the opening was applied at most once, and a signature ended it.
                let sessions = try await ECDSAWire.signingSessions(world: world, userId: user).filter {
                    $0.digest == Hex.encode(digest)
                }
                #expect(sessions.count <= 1, "trial \(trial), seed \(seed): \(sessions)")
                if signed {
                    #expect(
                        sessions.count == 1 && sessions[0].state == "done" && sessions[0].sealedStateCount == 0,
                        "trial \(trial), seed \(seed): \(sessions)")
                    if let session = sessions.first { completed.insert(session.id) }
                } else if sessions.contains(where: { $0.state != "done" }) {
                    // Left open by the failure: it holds the account until it expires (docs/server.md,
                    // "One at a time per account").
                    world.clock.advance(seconds: Int64(lifetime) + 1)
                }
                if setup.isDiscarded {
                    Issue.record("trial \(trial), seed \(seed): a fault aborted the signature and discarded the setup")
                    break
                }
            }
            // Each session signed at most once; every completed one did, and nothing aborted.
            let signed = try await ECDSAWire.auditedSessions(world: world, event: "ecdsaSigned", userId: user)
            #expect(Set(signed).count == signed.count, "seed \(seed): a session signed twice")
            #expect(completed.isSubset(of: Set(signed)) && completed.count == outcome.signatures, "seed \(seed)")
            #expect(signed.count - outcome.signatures <= outcome.failures.values.reduce(0, +), "seed \(seed)")
            #expect(try await ECDSAWire.auditedSessions(world: world, event: "ecdsaAborted", userId: user).isEmpty)
            #expect(outcome.signatures + outcome.failures.values.reduce(0, +) == trials)
            // Failures are rare: the retry policy outlasts the faults.
            #expect(outcome.signatures * 10 >= trials * 9, "seed \(seed): \(outcome)")
            let storage = try world.inspector()
            let verified = try await AuditTrail.verify(storage)
            await storage.close()
            #expect(verified.count == Int64(try await world.auditRows().count))

            // Every kind of fault hit at CI's count (about 360 requests, the rarest kind at 3 %: some ten
            // each); 20 trials make about 70 requests, which miss a 3 % kind about one run in nine.
            let (requests, counts) = proxy.report
            #expect(
                FaultProxy.Fault.allCases.allSatisfy { counts[$0, default: 0] > 0 } || trials < 100, "\(counts)")
            print(
                "ECDSAFaultyNetworkTests: backend \(backend), seed \(seed): \(outcome.signatures) of \(trials) signed, "
                    + "failures \(outcome.failures.sorted { $0.key < $1.key }), \(requests) requests, faults "
                    + "\(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" })"
                    + String(format: ", %.1f s", Date().timeIntervalSince(started)))
        }
    }
}
