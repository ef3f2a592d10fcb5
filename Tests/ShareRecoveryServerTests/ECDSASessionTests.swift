import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// The custodian as the second ECDSA signer (docs/formats.md §12, docs/ecdsa.md): a device's pair
/// setup and signatures over it through `/wallets/ecdsa`, on both backends; 2-of-2 wallets only.
@Suite("ECDSA sessions: pair setup and signing with the custodian")
struct ECDSASessionTests {
    /// n/2 of secp256k1, big-endian: a low s is at most this.
    static let halfOrder = Hex.decode("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0")!

    static func digest(_ text: String) -> [UInt8] { Keccak256.hash(Array(text.utf8)) }

    static func scrapeToken() -> String { Hex.encode(SystemRandom().bytes(count: 16)) }

    static func metricsOn(_ token: String) -> (inout ServerConfiguration) -> Void {
        { configuration in
            configuration.metricsToken = .value(SecureBytes(copying: Array(token.utf8)))
            WalletSessionTests.unlimitedFlows(&configuration)
        }
    }

    static func sessions(_ world: TestWorld, scrapeToken: String, _ labels: [String: String]) async throws -> Double {
        let scraped = try await world.send(.GET, "/metrics", headers: world.bearer(scrapeToken), checkSpec: false)
        return OperationsTests.samples(scraped.text).filter { sample in
            sample.name == "share_recovery_sessions_total" && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }.map(\.value).reduce(0, +)
    }

    /// The kinds of the user's integrator events in the outbox, in order.
    static func outboxKinds(_ world: TestWorld, user: String) async throws -> [String] {
        let storage = try world.inspector()
        do {
            let rows = try await storage.transaction { transaction in
                try await transaction.query("SELECT kind FROM event_outbox WHERE account = ? ORDER BY seq", .text(user))
            }
            await storage.close()
            return try rows.map { try $0.text("kind") }
        } catch {
            await storage.close()
            throw error
        }
    }

    /// A user's `sign` token, a client on the first server, a DKG-made secp256k1 wallet and the
    /// device's pair setup with the custodian.
    static func walletWithSetup(_ world: TestWorld, user: String) async throws -> (
        token: String, client: HTTPWalletClient, device: ShareRecord, setup: PairSetup
    ) {
        let token = try await world.token(for: user, purpose: "sign")
        let client = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in token })
        let device = try await client.createWallet(clientId: user, walletId: "w", curve: .secp256k1)
        return (token, client, device, try await client.makePairSetup(share: device, clientId: user))
    }

    @Test(
        "a device and the custodian make a pair setup and sign, for the key and a child key, through either server",
        arguments: TestBackend.allCases)
    func pairSetupAndSign(backend: TestBackend) async throws {
        let scrape = Self.scrapeToken()
        try await TestWorld.with(backend, servers: 2, configure: Self.metricsOn(scrape)) { world in
            let user = "ecdsa-signer"
            let token = try await world.token(for: user, purpose: "sign")
            let first = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in token })
            let second = HTTPWalletClient(baseURL: world.servers[1].baseURL(), tokenProvider: { _ in token })
            let device = try await first.createWallet(clientId: user, walletId: "w", curve: .secp256k1)
            let setup = try await first.makePairSetup(share: device, clientId: user)
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user) == [device.setId.hex: 0])

            let digest = Self.digest("pay 1 ether")
            let signature = try await second.signECDSA(share: device, setup: setup, clientId: user, digest: digest)
            #expect(signature.isValid(digest: digest, publicKey: device.publicKey))
            #expect(try signature.recoverPublicKey(digest: digest) == device.publicKey)
            #expect(!signature.isValid(digest: Self.digest("pay 2 ether"), publicKey: device.publicKey))

            let path = try DerivationPath("m/0/7")
            let child = try DerivedKey(walletPublicKey: device.publicKey, path: path).publicKey
            let childSignature = try await first.signECDSA(
                share: device, setup: setup, clientId: user, digest: digest, path: path)
            #expect(childSignature.isValid(digest: digest, publicKey: child))
            #expect(!childSignature.isValid(digest: digest, publicKey: device.publicKey))

            // The wire form the server answers with: r ‖ s ‖ v, s at most n/2, verifying under the key.
            let answers = try await ECDSAWire.sign(
                world: world, share: device, setup: setup, userId: user, token: token, digest: digest)
            #expect(answers.map(\.status) == [201, 200, 200], "\(answers.map(\.text))")
            let wire = try #require(answers.last?.string("signature").flatMap(Hex.decode))
            #expect(wire.count == 65 && !Self.halfOrder.lexicographicallyPrecedes(wire[32..<64]))
            let parsed = try ECDSASignature(recoverable: wire)
            #expect(parsed.isValid(digest: digest, publicKey: device.publicKey))

            let rows = try await world.auditRows().filter { $0.account == user }.map(\.event)
            #expect(rows.filter { $0 == "ecdsaPairSetupMade" }.count == 1)
            #expect(rows.filter { $0 == "ecdsaSigned" }.count == 3)
            // Each server counts its own; the two together saw every step.
            var completed = 0.0
            for server in 0..<2 {
                let scraped = try await world.send(
                    .GET, "/metrics", headers: world.bearer(scrape), server: server, checkSpec: false)
                completed += OperationsTests.samples(scraped.text).filter {
                    $0.name == "share_recovery_sessions_total" && $0.labels["protocol"] == "ecdsaSigning"
                        && $0.labels["event"] == "completed"
                }.map(\.value).reduce(0, +)
            }
            #expect(completed == 3)
        }
    }

    @Test(
        "each round state is used once (409 nonceReused), one ECDSA session per account at a time",
        arguments: TestBackend.allCases)
    func roundsAreUsedOnce(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let user = "ecdsa-replay"
            let (token, _, device, setup) = try await Self.walletWithSetup(world, user: user)
            let answers = try await ECDSAWire.sign(
                world: world, share: device, setup: setup, userId: user, token: token, digest: Self.digest("x"),
                replay: true)
            #expect(answers.map(\.status) == [201, 200, 409, 200, 409], "\(answers.map(\.text))")
            #expect(answers[2].errorCode == "nonceReused" && answers[4].errorCode == "nonceReused")

            // A session opened and left: a second one waits for it (or its expiry), a pair setup too.
            let (party, opened) = try await ECDSAWire.open(
                world: world, share: device, setup: setup, userId: user, token: token, digest: Self.digest("y"))
            #expect(opened.status == 201)
            let (_, beside) = try await ECDSAWire.open(
                world: world, share: device, setup: setup, userId: user, token: token, digest: Self.digest("y"))
            #expect(beside.status == 409 && beside.errorCode == "operationInProgress", "\(beside.text)")
            let setupBeside = try await ECDSAWire.openPairSetup(
                world: world, share: device, userId: user, token: token)
            #expect(setupBeside.status == 409 && setupBeside.errorCode == "operationInProgress")
            // Round 3 before round 2 is refused and changes nothing.
            let sessionId = try #require(opened.string("sessionId"))
            let early = try await world.send(
                .POST, "/wallets/ecdsa/signing-sessions/\(sessionId)/round3",
                json: .object([("round3", .string(Base64.encode([UInt8](repeating: 1, count: 64))))]),
                headers: world.bearer(token))
            #expect(early.status == 409 && early.errorCode == "conflict")
            // A round repeated with its Idempotency-Key gets the first answer again, and uses nothing more.
            let custodian1 = try #require(opened.string("round1").flatMap(Base64.decode))
            let round2 = JSONValue.object([
                ("round2", .string(Base64.encode(try party.round2([2: custodian1])[2] ?? [])))
            ])
            let keyed = world.bearer(token) + [("Idempotency-Key", "ecdsa-round2-\(sessionId)")]
            let firstTry = try await world.send(
                .POST, "/wallets/ecdsa/signing-sessions/\(sessionId)/round2", json: round2, headers: keyed)
            let retried = try await world.send(
                .POST, "/wallets/ecdsa/signing-sessions/\(sessionId)/round2", json: round2, headers: keyed)
            #expect(firstTry.status == 200 && retried.status == 200 && retried.body == firstTry.body)
            #expect(retried.headers.contains { $0.0.lowercased() == "idempotent-replayed" && $0.1 == "true" })
            let unkeyed = try await world.send(
                .POST, "/wallets/ecdsa/signing-sessions/\(sessionId)/round2", json: round2, headers: world.bearer(token)
            )
            #expect(unkeyed.status == 409 && unkeyed.errorCode == "nonceReused")
            // Expired, it frees the account (a token outlives no session: a fresh one).
            world.clock.advance(seconds: 901)
            let fresh = try await world.token(for: user, purpose: "sign")
            let later = try await HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in fresh })
                .signECDSA(
                    share: device, setup: setup, clientId: user, digest: Self.digest("z"))
            #expect(later.isValid(digest: Self.digest("z"), publicKey: device.publicKey))
        }
    }

    @Test(
        "a round raced on two servers is answered once: one 200, one 409 nonceReused", arguments: TestBackend.allCases)
    func racedRounds(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let user = "ecdsa-race"
            let (token, _, device, setup) = try await Self.walletWithSetup(world, user: user)
            let digest = Self.digest("raced")
            let (party, opened) = try await ECDSAWire.open(
                world: world, share: device, setup: setup, userId: user, token: token, digest: digest)
            let sessionId = try #require(opened.string("sessionId"))
            /// Sends one round to both servers at once; the answers, the successful one first.
            func race(_ round: String, _ message: [UInt8]) async throws -> [APIResponse] {
                let body = JSONValue.object([(round, .string(Base64.encode(message)))])
                let answers = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                    for server in 0..<2 {
                        group.addTask {
                            try await world.send(
                                .POST, "/wallets/ecdsa/signing-sessions/\(sessionId)/\(round)", json: body,
                                headers: world.bearer(token), server: server)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers.map(\.status).sorted() == [200, 409], "\(answers.map(\.text))")
                #expect(answers.first { $0.status == 409 }?.errorCode == "nonceReused")
                return answers.sorted { $0.status < $1.status }
            }
            let custodian1 = try #require(opened.string("round1").flatMap(Base64.decode))
            let second = try await race("round2", try party.round2([2: custodian1])[2] ?? [])
            let custodian2 = try #require(second[0].string("round2").flatMap(Base64.decode))
            let broadcast = try party.round3([2: custodian2])
            let third = try await race("round3", broadcast)
            let custodian3 = try #require(third[0].string("round3").flatMap(Base64.decode))
            let signature = try party.signature([1: broadcast, 2: custodian3])
            #expect(signature.isValid(digest: digest, publicKey: device.publicKey))
            #expect(third[0].string("signature") == Hex.encode(signature.recoverable))
            let signed = try await world.auditRows().filter { $0.account == user && $0.event == "ecdsaSigned" }
            #expect(signed.count == 1)
        }
    }

    @Test(
        "a tampered round aborts: the setup is discarded on both sides, audited and counted; the client makes a fresh one",
        arguments: TestBackend.allCases)
    func tamperedRoundAborts(backend: TestBackend) async throws {
        let scrape = Self.scrapeToken()
        try await TestWorld.with(backend, configure: Self.metricsOn(scrape)) { world in
            let user = "ecdsa-tamper"
            let (token, client, device, setup) = try await Self.walletWithSetup(world, user: user)

            // The server finds the device's round 2 altered.
            let answers = try await ECDSAWire.sign(
                world: world, share: device, setup: setup, userId: user, token: token, digest: Self.digest("a"),
                tamperRound2: true)
            #expect(answers.map(\.status) == [201, 200, 400], "\(answers.map(\.text))")
            #expect(answers.last?.errorCode == "ecdsaCheckFailed")
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user).isEmpty)
            let aborted = try await world.auditRows().filter { $0.account == user && $0.event == "ecdsaAborted" }
            #expect(aborted.count == 1)
            #expect(
                aborted.first?.detail.hasSuffix(#""reason":"ecdsaCheckFailed","check":"round2","culprit":1}"#) == true,
                "\(aborted)")
            #expect(
                try await Self.sessions(
                    world, scrapeToken: scrape, ["protocol": "ecdsaSigning", "event": "aborted", "reason": "round2"])
                    == 1)
            // Announced to the integrator: its outbox row is written with the audit row.
            #expect(try await Self.outboxKinds(world, user: user) == ["walletCreated", "ecdsaAborted"])

            // A second signature on the old setup is refused: the server keeps none.
            let refused = await #expect(throws: ShareRecoveryError.self) {
                _ = try await client.signECDSA(share: device, setup: setup, clientId: user, digest: Self.digest("b"))
            }
            #expect(refused?.code == .pairSetupStale, "\(String(describing: refused))")
            // The client's retrying form makes a fresh setup and signs.
            let (signature, fresh) = try await client.signECDSA(
                share: device, setup: setup, clientId: user, digest: Self.digest("b"))
            #expect(fresh !== setup && signature.isValid(digest: Self.digest("b"), publicKey: device.publicKey))

            // The device finds the custodian's round 1 wrong (it signs over a setup the server replaced):
            // it discards its own, tells the server, which discards its own.
            let replaced = try await client.makePairSetup(share: device, clientId: user)
            let current = try await client.makePairSetup(share: device, clientId: user)
            let deviceAbort = await #expect(throws: ShareRecoveryError.self) {
                _ = try await client.signECDSA(share: device, setup: replaced, clientId: user, digest: Self.digest("c"))
            }
            #expect(deviceAbort?.code == .ecdsaCheckFailed && deviceAbort?.party == 2)
            #expect(replaced.isDiscarded && !current.isDiscarded)
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user).isEmpty)
            let last = try await world.auditRows().filter { $0.account == user && $0.event == "ecdsaAborted" }.last
            #expect(last?.detail.hasSuffix(#""check":"round1","culprit":2}"#) == true, "\(String(describing: last))")
            #expect(
                try await Self.sessions(world, scrapeToken: scrape, ["protocol": "ecdsaSigning", "event": "aborted"])
                    == 2)
        }
    }

    @Test(
        "a second abort, over the fresh setup, stops the retrying client with the actionable error",
        arguments: TestBackend.allCases)
    func secondAbortStops(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "ecdsa-twice"
            let (_, client, device, kept) = try await Self.walletWithSetup(world, user: user)
            // Another setup replaces the kept one on the server: the first attempt aborts on the device.
            _ = try await client.makePairSetup(share: device, clientId: user)
            // Each fresh setup is replaced too before it signs (as a second process of the device
            // would), so the one more attempt aborts as well.
            let fresh = Locked<[PairSetup]>([])
            let stopped = await #expect(throws: ShareRecoveryError.self) {
                _ = try await client.signECDSA(
                    share: device, setup: kept, clientId: user, digest: Self.digest("twice")
                ) { setup in
                    fresh.withLock { $0.append(setup) }
                    _ = try await client.makePairSetup(share: device, clientId: user)
                }
            }
            #expect(stopped?.code == .ecdsaCheckFailed, "\(String(describing: stopped))")
            #expect(stopped?.reason.contains("aborted again over a fresh pair setup") == true)
            #expect(stopped?.reason.contains("stop and report") == true)
            // One fresh setup only, and it was discarded like the kept one; both aborts were audited.
            #expect(fresh.withLock { $0.count } == 1 && fresh.withLock { $0[0].isDiscarded } && kept.isDiscarded)
            let aborted = try await world.auditRows().filter { $0.account == user && $0.event == "ecdsaAborted" }
            #expect(aborted.count == 2)
            let signed = try await world.auditRows().filter { $0.account == user && $0.event == "ecdsaSigned" }
            #expect(signed.isEmpty)
        }
    }

    @Test(
        "a setup from before a recovery is stale: pairSetupStale on both sides; a fresh one signs under the same key",
        arguments: TestBackend.allCases)
    func staleAfterRecovery(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "ecdsa-recovered"
            let base = world.servers[0].baseURL()
            let token = try await world.token(for: user, purpose: "sign")
            let wallet = HTTPWalletClient(baseURL: base, tokenProvider: { _ in token })
            let lost = try await wallet.createWallet(clientId: user, walletId: "w", curve: .secp256k1)
            let oldSetup = try await wallet.makePairSetup(share: lost, clientId: user)

            let tokens: TokenProvider = { purpose in try await world.token(for: user, purpose: purpose.rawValue) }
            let client = ReferenceServerClient(base: base)
            let secret = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
            let secretText = SecureBytes(copying: Array(world.webhookSecret.utf8))
            try await RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: InMemorySigningShareStore(current: lost), tokens: tokens,
                    webhookSecret: secretText)
            ).backup(method: .cloudKey, secret: secret)
            let recovered = try await RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: InMemorySigningShareStore(), tokens: tokens, webhookSecret: secretText)
            ).recover(method: .cloudKey, secret: secret)
            #expect(recovered.generation == 1)
            // The recovery dropped the custodian's setups of the old set.
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user).isEmpty)

            let digest = Self.digest("after recovery")
            let local = await #expect(throws: ShareRecoveryError.self) {
                _ = try await wallet.signECDSA(share: recovered, setup: oldSetup, clientId: user, digest: digest)
            }
            #expect(local?.code == .pairSetupStale)
            // The server refuses a session without a setup of the set, and a setup naming another generation.
            let party = try ECDSASigningParty(
                share: lost, signers: [1, 2], setups: [oldSetup], digest: digest)
            let round1 = try party.round1()[2] ?? []
            let opened = try await world.send(
                .POST, "/wallets/ecdsa/signing-sessions",
                json: .object(
                    ECDSAWire.binding(recovered, userId: user) + [
                        ("digest", .string(Hex.encode(digest))), ("round1", .string(Base64.encode(round1))),
                    ]), headers: world.bearer(token))
            #expect(opened.status == 409 && opened.errorCode == "pairSetupStale", "\(opened.text)")
            let olderGeneration = try await ECDSAWire.openPairSetup(
                world: world, share: recovered, userId: user, token: token, generation: 0)
            #expect(olderGeneration.status == 409 && olderGeneration.errorCode == "pairSetupStale")
            let oldSet = try await ECDSAWire.openPairSetup(world: world, share: lost, userId: user, token: token)
            #expect(oldSet.status == 409 && oldSet.errorCode == "conflict")

            let (signature, fresh) = try await wallet.signECDSA(
                share: recovered, setup: oldSetup, clientId: user, digest: digest)
            #expect(fresh.generation == 1 && signature.isValid(digest: digest, publicKey: lost.publicKey))
        }
    }

    @Test(
        "an added device signs over its own setup; its removal and the wallet's eject drop the custodian's setups",
        arguments: TestBackend.allCases)
    func devicesAndEject(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "ecdsa-devices"
            let (token, client, device, _) = try await Self.walletWithSetup(world, user: user)
            let phone = try await DeviceWire.add(
                world: world, approver: device, userId: user, deviceId: "phone",
                token: try await world.token(for: user, purpose: "addDevice"))
            let phoneSetup = try await client.makePairSetup(share: phone, clientId: user)
            let digest = Self.digest("from the phone")
            let signature = try await client.signECDSA(
                share: phone, setup: phoneSetup, clientId: user, digest: digest)
            #expect(signature.isValid(digest: digest, publicKey: device.publicKey))
            #expect(
                try await ECDSAWire.keptSetups(world: world, userId: user) == [
                    device.setId.hex: 0, phone.setId.hex: 0,
                ])

            let removal = try await DeviceWire.remove(
                world: world, deviceId: "phone", token: try await world.token(for: user, purpose: "removeDevice"))
            #expect(removal.status == 204)
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user) == [device.setId.hex: 0])
            let ejected = try await WalletWire.eject(
                world: world, share: device, userId: user, token: try await world.token(for: user, purpose: "eject"))
            #expect(ejected.status == 200)
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user).isEmpty)
            let refused = try await ECDSAWire.openPairSetup(world: world, share: device, userId: user, token: token)
            #expect(refused.status == 409 && refused.errorCode == "walletEjected", "\(refused.text)")
        }
    }
}
