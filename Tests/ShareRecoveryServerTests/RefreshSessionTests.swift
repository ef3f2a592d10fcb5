import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// Refresh (docs/formats.md §3) through `/recovery/sessions` with purpose `refresh`: the device's
/// signing set reshared with the custodian into the next generation under the same key, so the share
/// kept aside from before signs nothing after; on both backends.
@Suite("Refresh sessions")
struct RefreshSessionTests {
    static let mode = SigningMode.bip340

    /// A user's `sign` token and a client on the first server, and a DKG-made secp256k1 wallet (it
    /// signs FROST BIP-340 and ECDSA with one key).
    static func wallet(_ world: TestWorld, user: String) async throws -> (
        token: String, client: HTTPWalletClient, device: ShareRecord
    ) {
        let token = try await world.token(for: user, purpose: "sign")
        let client = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in token })
        return (token, client, try await client.createWallet(clientId: user, walletId: "w", curve: .secp256k1))
    }

    /// An engine on `store` against the first server, its tokens minted for `user` as asked.
    static func engine(_ world: TestWorld, user: String, store: InMemorySigningShareStore)
        -> RecoveryEngine.Configuration
    {
        ReferenceServerClient(base: world.servers[0].baseURL()).engineConfiguration(
            userId: user, store: store,
            tokens: { purpose in try await world.token(for: user, purpose: purpose.rawValue) }, webhookSecret: nil)
    }

    /// Whether a FROST signature with `share` through the server verifies under the wallet key.
    static func signsFROST(_ world: TestWorld, share: ShareRecord, user: String, token: String) async throws -> Bool {
        let message = Array("refresh \(share.generation)".utf8)
        let signature = try await WalletWire.sign(
            world: world, share: share, userId: user, message: message, mode: mode, token: token)
        return SignatureVerifier.verify(signature: signature, message: message, publicKey: share.publicKey, mode: mode)
    }

    @Test(
        "a refresh keeps the key: the new generation signs (FROST and ECDSA), the old share is refused; audited and counted",
        arguments: TestBackend.allCases)
    func refreshInPlace(backend: TestBackend) async throws {
        let scrape = ECDSASessionTests.scrapeToken()
        try await TestWorld.with(backend, configure: ECDSASessionTests.metricsOn(scrape)) { world in
            let user = "refreshed"
            let (token, client, old) = try await Self.wallet(world, user: user)
            let oldSetup = try await client.makePairSetup(share: old, clientId: user)
            let store = InMemorySigningShareStore(current: old)

            let new = try await RecoveryEngine(configuration: Self.engine(world, user: user, store: store)).refresh()
            #expect(new.generation == old.generation + 1 && new.publicKey == old.publicKey)
            #expect(new.setId != old.setId && new.partyIndex == 1 && new.walletId == old.walletId)
            #expect(await store.currentShare() == new)
            #expect(await store.pendingSession() == nil)
            // The refreshed set's pair setups went with it.
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user).isEmpty)

            // The new generation signs under the same key, FROST and ECDSA.
            #expect(try await Self.signsFROST(world, share: new, user: user, token: token))
            let digest = ECDSASessionTests.digest("after the refresh")
            let newSetup = try await client.makePairSetup(share: new, clientId: user)
            let signature = try await client.signECDSA(share: new, setup: newSetup, clientId: user, digest: digest)
            #expect(try signature.recoverPublicKey(digest: digest) == old.publicKey)
            #expect(try await ECDSAWire.keptSetups(world: world, userId: user) == [new.setId.hex: 1])

            // The share kept aside from before signs nothing, FROST or ECDSA, and refreshes nothing.
            let frost = try await WalletWire.openSigning(
                world: world, share: old, userId: user, mode: Self.mode, token: token)
            #expect(frost.status == 409 && frost.errorCode == "conflict", "\(frost.text)")
            let ecdsa = await #expect(throws: (any Error).self) {
                _ = try await client.signECDSA(share: old, setup: oldSetup, clientId: user, digest: digest)
            }
            #expect((ecdsa as? TransportError)?.code == .conflict || (ecdsa as? ShareRecoveryError)?.code == .conflict)
            let again = await #expect(throws: ShareRecoveryError.self) {
                try await RecoveryEngine(
                    configuration: Self.engine(world, user: user, store: InMemorySigningShareStore(current: old))
                ).refresh()
            }
            #expect(again?.code == .noMatchingShare)

            let rows = try await world.auditRows().filter { $0.account == user }.map(\.event)
            // The refused second refresh failed at open: audited as failed, never started.
            #expect(rows.filter { $0 == "refreshStarted" }.count == 1)
            #expect(rows.filter { $0 == "refreshCompleted" }.count == 1)
            #expect(rows.filter { $0 == "refreshFailed" }.count == 1)
            #expect(
                try await ECDSASessionTests.sessions(
                    world, scrapeToken: scrape, ["protocol": "refresh", "event": "completed"]) == 1)
        }
    }

    @Test(
        "a refresh cut off before its confirm leaves the old generation signing; one whose confirm landed ends on the new one",
        arguments: TestBackend.allCases, [false, true])
    func cutOffMidway(backend: TestBackend, confirmLands: Bool) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "refresh-cut-\(confirmLands)"
            let (token, _, old) = try await Self.wallet(world, user: user)
            let store = InMemorySigningShareStore(current: old)
            var cut = Self.engine(world, user: user, store: store)
            cut.custodian = ResumeOverHTTPTests.LosingNetwork(
                try #require(cut.custodian as? HTTPCustodian), confirmLands: confirmLands)
            await #expect(throws: ResumeOverHTTPTests.Cut.self) {
                try await RecoveryEngine(configuration: cut).refresh()
            }
            // Nothing half-kept: the old share is still current, the new one only staged.
            let staged = try #require(await store.stagedShare())
            #expect(await store.currentShare() == old && staged.generation == old.generation + 1)
            #expect(await store.pendingSession()?.purpose == .refresh)
            if !confirmLands {
                #expect(try await Self.signsFROST(world, share: old, user: user, token: token))
            }

            // The next start settles it: the old generation stays, or the confirmed new one becomes current.
            let outcome = try await RecoveryEngine(configuration: Self.engine(world, user: user, store: store))
                .resumeInterruptedOperation()
            #expect(outcome == (confirmLands ? .completed(.refresh) : .rolledBack(.refresh)))
            let current = try #require(await store.currentShare())
            let stillStaged = await store.stagedShare()
            #expect(current == (confirmLands ? staged : old) && stillStaged == nil)
            #expect(try await Self.signsFROST(world, share: current, user: user, token: token))
            let refused = confirmLands ? old : staged
            let opened = try await WalletWire.openSigning(
                world: world, share: refused, userId: user, mode: Self.mode, token: token)
            #expect(opened.status == 409, "\(opened.text)")
        }
    }
    @Test(
        "with a refresh policy, a primary set older than it signs nothing (FROST or ECDSA) until a refresh, which it lets through",
        arguments: TestBackend.allCases)
    func refreshPolicy(backend: TestBackend) async throws {
        let days: Int64 = 2
        try await TestWorld.with(
            backend,
            configure: { configuration in
                WalletSessionTests.unlimitedFlows(&configuration)
                configuration.refreshAfterSeconds = days * 86_400
            }
        ) { world in
            let user = "policy"
            let (_, _, old) = try await Self.wallet(world, user: user)
            // Tokens live minutes and the test moves days: each call gets a fresh one.
            let client = HTTPWalletClient(
                baseURL: world.servers[0].baseURL(),
                tokenProvider: { _ in try await world.token(for: user, purpose: "sign") })
            let setup = try await client.makePairSetup(share: old, clientId: user)
            let digest = ECDSASessionTests.digest("under a refresh policy")

            // An hour short of the policy's age: it signs.
            world.clock.advance(seconds: days * 86_400 - 3_600)
            var token = try await world.token(for: user, purpose: "sign")
            #expect(try await Self.signsFROST(world, share: old, user: user, token: token))
            _ = try await client.signECDSA(share: old, setup: setup, clientId: user, digest: digest)

            // An hour past it: refused, FROST and ECDSA, with the code that says what to do.
            world.clock.advance(seconds: 2 * 3_600)
            token = try await world.token(for: user, purpose: "sign")
            let frost = try await WalletWire.openSigning(
                world: world, share: old, userId: user, mode: Self.mode, token: token)
            #expect(frost.status == 409 && frost.errorCode == "refreshRequired", "\(frost.text)")
            let ecdsa = await #expect(throws: TransportError.self) {
                _ = try await client.signECDSA(share: old, setup: setup, clientId: user, digest: digest)
            }
            #expect(ecdsa?.code == .refreshRequired && ecdsa?.status == 409, "\(String(describing: ecdsa))")

            // The refresh goes through, and its new generation signs again, counted from its confirm.
            let store = InMemorySigningShareStore(current: old)
            let new = try await RecoveryEngine(configuration: Self.engine(world, user: user, store: store)).refresh()
            #expect(new.generation == old.generation + 1 && new.publicKey == old.publicKey)
            #expect(try await Self.signsFROST(world, share: new, user: user, token: token))
            let newSetup = try await client.makePairSetup(share: new, clientId: user)
            let signature = try await client.signECDSA(share: new, setup: newSetup, clientId: user, digest: digest)
            #expect(try signature.recoverPublicKey(digest: digest) == old.publicKey)
            world.clock.advance(seconds: days * 86_400)
            token = try await world.token(for: user, purpose: "sign")
            let later = try await WalletWire.openSigning(
                world: world, share: new, userId: user, mode: Self.mode, token: token)
            #expect(later.status == 409 && later.errorCode == "refreshRequired", "\(later.text)")
        }
    }
}
