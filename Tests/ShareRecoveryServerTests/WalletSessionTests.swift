import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// The custodian as party 2 of a wallet: DKG and FROST signing sessions (docs/formats.md §10–§11).
@Suite("Wallet sessions: DKG and signing with the custodian")
struct WalletSessionTests {
    static func unlimitedFlows(_ configuration: inout ServerConfiguration) {
        let unlimited = ServerConfiguration.RateLimit(limit: 1_000_000, windowSeconds: 3600)
        configuration.rateLimits = .init(
            verifyPerIdentifier: unlimited, verifyPerAddress: unlimited, flowCreationPerIdentifier: unlimited,
            flowCreationPerAddress: unlimited)
    }

    static let modes: [(Curve, SigningMode)] = [(.secp256k1, .bip340), (.secp256k1, .rfc9591), (.ed25519, .rfc9591)]

    @Test("a DKG-made wallet signs in every mode of its curve, through either server", arguments: TestBackend.allCases)
    func createAndSign(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            for (curve, mode) in Self.modes {
                let user = "u-\(curve)-\(mode)"
                let token = try await world.token(for: user, purpose: "sign")
                let device = try await WalletWire.createWallet(
                    world: world, userId: user, walletId: "w", curve: curve, token: token)
                #expect(device.generation == 0 && device.partyIndex == 1 && device.kind == .signing)
                for server in 0..<2 {
                    let message = Array("message \(server)".utf8)
                    let signature = try await WalletWire.sign(
                        world: world, share: device, userId: user, message: message, mode: mode, token: token,
                        server: server)
                    #expect(
                        SignatureVerifier.verify(
                            signature: signature, message: message, publicKey: device.publicKey, mode: mode))
                }
            }
        }
    }

    @Test(
        "child and Taproot keys: the custodian signs for the path and Taproot the session opened with; refusals are 400",
        arguments: TestBackend.allCases)
    func tweakedSignatures(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let token = try await world.token(for: "u-tweaks", purpose: "sign")
            let device = try await WalletWire.createWallet(
                world: world, userId: "u-tweaks", walletId: "w", curve: .secp256k1, token: token)
            let message = Array("a sighash".utf8)
            for tweaks in [
                SigningTweaks(path: try DerivationPath("m/0/1")), SigningTweaks(taproot: true),
                SigningTweaks(path: try DerivationPath("m/7"), taproot: true),
            ] {
                let signature = try await WalletWire.sign(
                    world: world, share: device, userId: "u-tweaks", message: message, mode: .bip340, token: token,
                    server: 1,
                    tweaks: tweaks)
                let signingKey = try tweaks.apply(to: device.publicKey).signingKey
                #expect(
                    SignatureVerifier.verify(
                        signature: signature, message: message, publicKey: signingKey, mode: .bip340), "\(tweaks)")
                #expect(
                    !SignatureVerifier.verify(
                        signature: signature, message: message, publicKey: device.publicKey, mode: .bip340))
            }
            // Refused before any nonce is made: a hardened step, tweaks in rfc9591, a taproot that is no boolean.
            let hardened = try await WalletWire.openSigning(
                world: world, share: device, userId: "u-tweaks", mode: .bip340, token: token,
                extra: [("path", .string("m/0'")), ("taproot", .bool(false))])
            #expect(hardened.status == 400 && hardened.errorCode == "invalidParameters", "\(hardened.text)")
            let rfc = try await WalletWire.openSigning(
                world: world, share: device, userId: "u-tweaks", mode: .rfc9591, token: token,
                tweaks: SigningTweaks(taproot: true))
            #expect(rfc.status == 400 && rfc.errorCode == "invalidParameters", "\(rfc.text)")
            let notBool = try await WalletWire.openSigning(
                world: world, share: device, userId: "u-tweaks", mode: .bip340, token: token,
                extra: [("taproot", .string("yes"))])
            #expect(notBool.status == 400 && notBool.errorCode == "malformedInput", "\(notBool.text)")

            // An ed25519 wallet has no tweaks.
            let edToken = try await world.token(for: "u-tweaks-ed", purpose: "sign")
            let edDevice = try await WalletWire.createWallet(
                world: world, userId: "u-tweaks-ed", walletId: "w", curve: .ed25519, token: edToken)
            let ed = try await WalletWire.openSigning(
                world: world, share: edDevice, userId: "u-tweaks-ed", mode: .rfc9591, token: edToken,
                tweaks: SigningTweaks(path: try DerivationPath("m/0")))
            #expect(ed.status == 400 && ed.errorCode == "invalidParameters", "\(ed.text)")
        }
    }

    @Test("a signing session signs once: a replay and a race answer 409 nonceReused", arguments: TestBackend.allCases)
    func nonceIsConsumedOnce(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2) { world in
            let token = try await world.token(for: "replay", purpose: "sign")
            let device = try await WalletWire.createWallet(
                world: world, userId: "replay", walletId: "w", curve: .secp256k1, token: token)
            for attempt in 0..<5 {
                let opened = try await WalletWire.openSigning(
                    world: world, share: device, userId: "replay", mode: .bip340, token: token)
                let sessionId = try #require(opened.string("sessionId"))
                let nonce = try SigningParty(share: device, mode: .bip340).commit()
                let body = JSONValue.object([
                    ("message", .string(Base64.encode([UInt8(attempt)]))),
                    ("commitment", ProtocolWire.encode(nonce.commitment)),
                ])
                // Two requests at once, one per server: exactly one signature share is released.
                let statuses = try await withThrowingTaskGroup(of: APIResponse.self) { group in
                    for server in 0..<2 {
                        group.addTask {
                            try await world.send(
                                .POST, "/wallets/signing-sessions/\(sessionId)/sign", json: body,
                                headers: world.bearer(token), server: server)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.map(\.status).sorted() == [200, 409], "\(statuses.map(\.text))")
                #expect(statuses.first { $0.status == 409 }?.errorCode == "nonceReused")
                let replay = try await world.send(
                    .POST, "/wallets/signing-sessions/\(sessionId)/sign", json: body, headers: world.bearer(token))
                #expect(replay.status == 409 && replay.errorCode == "nonceReused")
            }
        }
    }

    @Test("DKG refusals: a bad proof, the wrong purpose or user, a second wallet", arguments: TestBackend.allCases)
    func dkgRefusals(backend: TestBackend) async throws {
        try await TestWorld.with(backend) { world in
            let token = try await world.token(for: "refuse", purpose: "sign")
            let parameters = try DKGParameters(curve: .ed25519, walletId: "w", threshold: 2, parties: 2)
            let party = try DKGParty(parameters: parameters, partyIndex: 1)
            // Party 1's commitments with a proof made for party 2's index.
            let foreign = try DKGProof.prove(secret: Scalar.random(on: .ed25519), index: 2)
            let forged = DKGRound1Message(sender: 1, commitments: party.round1Message.commitments, proof: foreign)
            func open(_ round1: DKGRound1Message, token: String) async throws -> APIResponse {
                try await world.send(
                    .POST, "/wallets/dkg",
                    json: .object([
                        ("clientId", .string("refuse")), ("walletId", .string("w")), ("curve", .string("ed25519")),
                        ("threshold", .number("2")), ("parties", .number("2")), ("round1", ProtocolWire.encode(round1)),
                        ("clientKey", .string(Hex.encode(SealingKeyPair().publicKey))),
                    ]), headers: world.bearer(token))
            }
            let bad = try await open(forged, token: token)
            #expect(bad.status == 400 && bad.errorCode == "dkgProofFailed", "\(bad.text)")
            let recover = try await world.token(for: "refuse", purpose: "recover")
            #expect(try await open(party.round1Message, token: recover).status == 403)
            let other = try await world.token(for: "someone-else", purpose: "sign")
            #expect(try await open(party.round1Message, token: other).status == 403)

            _ = try await WalletWire.createWallet(
                world: world, userId: "refuse", walletId: "w", curve: .ed25519, token: token)
            let second = try await open(party.round1Message, token: token)
            #expect(second.status == 409, "\(second.text)")
        }
    }

    @Test(
        "after a recovery the wallet signs under the same key; the lost device's share is refused",
        arguments: TestBackend.allCases)
    func recoveredWalletSigns(backend: TestBackend) async throws {
        // A token per engine call: more OTP flows than the standard per-identifier limit allows.
        try await TestWorld.with(backend, configure: Self.unlimitedFlows) { world in
            let user = "recovering"
            let base = world.servers[0].baseURL()
            let signToken = try await world.token(for: user, purpose: "sign")
            let wallet = HTTPWalletClient(baseURL: base, tokenProvider: { _ in signToken })
            let lost = try await wallet.createWallet(clientId: user, walletId: "w", curve: .secp256k1)
            let before = try await wallet.sign(share: lost, clientId: user, message: [7])
            #expect(
                SignatureVerifier.verify(
                    signature: before.signature, message: [7], publicKey: lost.publicKey, mode: .bip340))

            // Back up with a cloud key from the device, then recover on a new device.
            let tokens: TokenProvider = { purpose in try await world.token(for: user, purpose: purpose.rawValue) }
            let client = ReferenceServerClient(base: base)
            let secret = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
            let device = InMemorySigningShareStore(current: lost)
            let secretText = SecureBytes(copying: Array(world.webhookSecret.utf8))
            try await RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: device, tokens: tokens, webhookSecret: secretText)
            )
            .backup(method: .cloudKey, secret: secret)
            let newDevice = InMemorySigningShareStore()
            let recovered = try await RecoveryEngine(
                configuration: client.engineConfiguration(
                    userId: user, store: newDevice, tokens: tokens, webhookSecret: secretText)
            ).recover(method: .cloudKey, secret: secret)
            #expect(recovered.generation == 1 && recovered.publicKey == lost.publicKey)

            let after = try await wallet.sign(share: recovered, clientId: user, message: [8])
            #expect(
                SignatureVerifier.verify(
                    signature: after.signature, message: [8], publicKey: lost.publicKey, mode: .bip340))
            // The server refuses it with its 409: a transport error, with the server's code kept.
            let error = await #expect(throws: TransportError.self) {
                _ = try await wallet.sign(share: lost, clientId: user, message: [9])
            }
            #expect(error?.code == .conflict && error?.status == 409, "\(String(describing: error))")
        }
    }

    @Test(
        "concurrent clients sign through two servers on one database: every signature valid, no commitment used twice",
        arguments: TestBackend.allCases)
    func concurrentSigning(backend: TestBackend) async throws {
        let (clients, signatures) = backend == .postgres ? (64, 4) : (16, 3)
        // What this test checks is that no nonce commitment is used twice, not latency: 64 clients
        // under a sanitizer on a busy 2-core machine can queue past the client's default 10 s.
        let transport = HTTPTransport(configuration: .init(timeout: .seconds(60), attemptTimeout: .seconds(30)))
        try await TestWorld.with(backend, servers: 2, configure: Self.unlimitedFlows) { world in
            let commitments = try await withThrowingTaskGroup(of: [String].self) { group in
                for index in 0..<clients {
                    group.addTask {
                        let user = "concurrent-\(index)"
                        let token = try await world.token(for: user, purpose: "sign", server: index % 2)
                        let curve: Curve = index % 3 == 0 ? .ed25519 : .secp256k1
                        let first = HTTPWalletClient(
                            baseURL: world.servers[index % 2].baseURL(), tokenProvider: { _ in token },
                            transport: transport)
                        let device = try await first.createWallet(clientId: user, walletId: "w-\(index)", curve: curve)
                        var seen: [String] = []
                        for round in 0..<signatures {
                            let wallet = HTTPWalletClient(
                                baseURL: world.servers[(index + round) % 2].baseURL(), tokenProvider: { _ in token },
                                transport: transport)
                            let message = Array("client \(index) round \(round)".utf8)
                            let (package, signature) = try await wallet.sign(
                                share: device, clientId: user, message: message)
                            #expect(
                                SignatureVerifier.verify(
                                    signature: signature, message: message, publicKey: device.publicKey,
                                    mode: package.mode))
                            seen.append(package.commitments[2]!.hiding.hex + package.commitments[2]!.binding.hex)
                        }
                        return seen
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(commitments.count == clients * signatures)
            #expect(Set(commitments).count == commitments.count, "a custodian nonce commitment was used twice")
        }
    }
}
