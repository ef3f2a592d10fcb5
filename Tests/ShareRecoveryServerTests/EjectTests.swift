import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import TestSupport
import Testing

@testable import ShareRecoveryServer

/// Eject over HTTP (docs/eject.md): an OTP flow of purpose eject, the custodian's share released
/// once, the key rebuilt on the device and checked apart from the engine, the wallet refused
/// afterwards, the audit row in an intact chain, and no form of the key in a log line or a row.
@Suite("Eject: the custodian releases its share once, then refuses the wallet")
struct EjectTests {
    @Test(
        "flow → token → eject → the key's public key, computed apart, is the wallet's → signing refused → audited",
        arguments: TestBackend.allCases)
    func ejectEndToEnd(backend: TestBackend) async throws {
        let log = CapturedLog()
        var logger = Logger(label: "eject") { _ in CapturingLogHandler(sink: log) }
        logger.logLevel = .trace
        try await TestWorld.with(backend, servers: 2) { configuration in
            WalletSessionTests.unlimitedFlows(&configuration)
            configuration.logger = logger
        } _: { world in
            var secrets: [SecretForms] = []
            for curve in Curve.allCases {
                let user = "eject-\(curve)"
                let signToken = try await world.token(for: user, purpose: "sign")
                let wallet = HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in signToken })
                let device = try await wallet.createWallet(clientId: user, walletId: "w", curve: curve)
                _ = try await wallet.sign(share: device, clientId: user, message: [1])

                // The eject token comes from its own flow; the client asks for purpose eject.
                let ejectToken = try await world.token(for: user, purpose: "eject", server: 1)
                let asked = Locked<[TokenPurpose]>([])
                let ejecting = HTTPWalletClient(
                    baseURL: world.servers[1].baseURL(),
                    tokenProvider: { purpose in
                        asked.withLock { $0.append(purpose) }
                        return purpose == .eject ? ejectToken : signToken
                    })
                let key = try await ejecting.eject(share: device, clientId: user)
                #expect(asked.withLock { $0 } == [.eject])
                #expect(key.publicKey == device.publicKey && key.walletId == "w")
                let hex = String(decoding: key.privateKeyHex.revealedBytes(), as: UTF8.self)
                #expect(ExportedKeyCheck.publicKey(ofHex: hex, curve: curve) == device.publicKey.rawRepresentation)
                secrets.append(SecretForms("\(curve) key", secret: key.privateKey.rawRepresentation))
                secrets.append(
                    SecretForms("\(curve) device share", secret: try #require(device.secret).rawRepresentation))

                // Afterwards: signing, a second eject and a new DKG of the wallet are refused with walletEjected.
                for server in 0..<2 {
                    let again = HTTPWalletClient(
                        baseURL: world.servers[server].baseURL(), tokenProvider: { _ in signToken })
                    let refused = await #expect(throws: ShareRecoveryError.self) {
                        _ = try await again.sign(share: device, clientId: user, message: [2])
                    }
                    #expect(refused?.code == .walletEjected, "\(String(describing: refused))")
                }
                let opened = try await WalletWire.openSigning(
                    world: world, share: device, userId: user, mode: .default(for: curve), token: signToken)
                #expect(opened.status == 409 && opened.errorCode == "walletEjected", "\(opened.text)")
                let secondToken = try await world.token(for: user, purpose: "eject")
                let second = await #expect(throws: ShareRecoveryError.self) {
                    _ = try await HTTPWalletClient(
                        baseURL: world.servers[0].baseURL(), tokenProvider: { _ in secondToken }
                    )
                    .eject(share: device, clientId: user)
                }
                #expect(second?.code == .walletEjected)
                let recreate = await #expect(throws: ShareRecoveryError.self) {
                    _ = try await wallet.createWallet(clientId: user, walletId: "w", curve: curve)
                }
                #expect(recreate?.code == .walletEjected)

                // What the server keeps: the ejected_wallets row; what it deleted: its signing share.
                let storage = try world.inspector()
                let (shares, marks) = try await storage.transaction { transaction in
                    (
                        try await transaction.query(
                            "SELECT set_id FROM signing_shares WHERE client_id = ?", .text(user)
                        ).count,
                        try await transaction.query(
                            "SELECT public_key FROM ejected_wallets WHERE client_id = ? AND wallet_id = ?", .text(user),
                            .text("w")
                        ).map { try $0.text("public_key") }
                    )
                }
                await storage.close()
                #expect(shares == 0)
                #expect(marks == [device.publicKey.hex])

                let rows = try await world.auditRows().filter { $0.account == user }
                // Filtered outside #expect: inside the macro this one expression took seconds to type-check.
                let ejections = rows.filter { $0.event == "walletEjected" }.count
                #expect(ejections == 1)
                let ejected = try #require(rows.first { $0.event == "walletEjected" })
                #expect(
                    ejected.detail.contains("\"walletId\":\"w\"") && ejected.detail.contains(device.setId.hex),
                    "\(ejected.detail)")
            }
            let storage = try world.inspector()
            let verification = try await AuditTrail.verify(storage)
            await storage.close()
            #expect(verification.count > 0)

            // No form of a key or share in a log line, an audit row or any stored row.
            let rows = try await world.auditRows().map { "\($0.account) \($0.event) \($0.detail)" }.joined(
                separator: "\n")
            let stored = try await world.snapshot().joined(separator: "\n")
            let logged = log.all.joined(separator: "\n")
            #expect(!logged.isEmpty)
            #expect(SecretForms.leaks(of: secrets, in: logged).isEmpty)
            #expect(SecretForms.leaks(of: secrets, in: rows).isEmpty)
            #expect(SecretForms.leaks(of: secrets, in: stored).isEmpty)
        }
    }

    @Test(
        "eject needs a token of purpose eject, for the user: sign, recover, another user's are 403 and change nothing",
        arguments: TestBackend.allCases)
    func wrongPurposeRefused(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "eject-purpose"
            let signToken = try await world.token(for: user, purpose: "sign")
            let device = try await HTTPWalletClient(
                baseURL: world.servers[0].baseURL(), tokenProvider: { _ in signToken }
            )
            .createWallet(clientId: user, walletId: "w", curve: .secp256k1)
            let before = try await world.snapshot()
            let others = [
                try await world.token(for: user, purpose: "recover"), signToken,
                try await world.token(for: "someone-else", purpose: "eject"),
            ]
            for token in others {
                let response = try await WalletWire.eject(world: world, share: device, userId: user, token: token)
                #expect(response.status == 403 && response.errorCode == "forbidden", "\(response.text)")
            }
            let missing = try await WalletWire.eject(world: world, share: device, userId: user, token: nil)
            #expect(missing.status == 401)
            // The client refuses a token of another purpose the same way (the provider hands it sign).
            let wrong = await #expect(throws: TransportError.self) {
                _ = try await HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in signToken })
                    .eject(share: device, clientId: user)
            }
            #expect(wrong?.code == .forbidden)
            // An eject token cannot sign.
            let ejectToken = try await world.token(for: user, purpose: "eject")
            let signing = try await WalletWire.openSigning(
                world: world, share: device, userId: user, mode: .bip340, token: ejectToken)
            #expect(signing.status == 403, "\(signing.text)")
            #expect(try await world.snapshot() == before)
            // A device share of another set is refused before anything changes; then the right one works once.
            let stale = try KeyGeneration.generate(curve: .secp256k1, walletId: "w")[0]
            let refused = try await WalletWire.eject(
                world: world, share: device, userId: user, token: ejectToken, setId: stale.setId.hex)
            #expect(refused.status == 409 && refused.errorCode == "conflict", "\(refused.text)")
            #expect(try await world.snapshot() == before)
            let released = try await WalletWire.eject(world: world, share: device, userId: user, token: ejectToken)
            #expect(released.status == 200, "\(released.text)")
            // The token is single use.
            let replay = try await WalletWire.eject(world: world, share: device, userId: user, token: ejectToken)
            #expect(replay.status == 409, "\(replay.text)")
        }
    }

    @Test(
        "a lost answer: the same Idempotency-Key replays the sealed share, once ejected",
        arguments: TestBackend.allCases)
    func lostAnswerIsReplayed(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2, configure: WalletSessionTests.unlimitedFlows) { world in
            let user = "eject-replay"
            let signToken = try await world.token(for: user, purpose: "sign")
            let device = try await HTTPWalletClient(
                baseURL: world.servers[0].baseURL(), tokenProvider: { _ in signToken }
            )
            .createWallet(clientId: user, walletId: "w", curve: .ed25519)
            let ejectToken = try await world.token(for: user, purpose: "eject")
            let sessionKey = SealingKeyPair()
            let body = JSONValue.object([
                ("clientId", .string(user)), ("walletId", .string("w")), ("setId", .string(device.setId.hex)),
                ("clientKey", .string(Hex.encode(sessionKey.publicKey))),
            ])
            let headers = world.bearer(ejectToken) + [("Idempotency-Key", Hex.encode(SystemRandom().bytes(count: 16)))]
            let first = try await world.send(.POST, "/wallets/eject", json: body, headers: headers, server: 0)
            let again = try await world.send(.POST, "/wallets/eject", json: body, headers: headers, server: 1)
            #expect(first.status == 200 && again.status == 200, "\(again.text)")
            #expect(again.headers.contains { $0.0.lowercased() == "idempotent-replayed" && $0.1 == "true" })
            #expect(first.string("sealedShare") == again.string("sealedShare"))
            // The replayed share opens with the call's key and completes the device's share to the wallet key.
            let sealedText = try #require(again.string("sealedShare"))
            let sealed = try #require(Base64.decode(sealedText))
            let secret = try Scalar(secret: try SealedBox.open(sealed, with: sessionKey), curve: .ed25519)
            let custodian = try ShareRecord(
                walletId: "w", curve: .ed25519, kind: .signing, threshold: 2, parties: 2, partyIndex: 2,
                generation: device.generation,
                setId: device.setId, secret: secret, commitments: device.commitments)
            #expect(try KeyEjection.rebuildKeyForEject([device, custodian]).publicKey == device.publicKey)
            // Without the Idempotency-Key, a new request is refused: the wallet is ejected.
            let fresh = try await WalletWire.eject(world: world, share: device, userId: user, token: ejectToken)
            #expect(fresh.status == 409 && fresh.errorCode == "walletEjected", "\(fresh.text)")
            #expect(try await world.auditRows().filter { $0.event == "walletEjected" }.count == 1)
        }
    }
}

extension WalletWire {
    /// `POST /wallets/eject` for the device's wallet (its set, or `setId`), the share sealed to a
    /// throwaway key; `token` `nil` sends no `Authorization`.
    static func eject(
        world: TestWorld, share: ShareRecord, userId: String, token: String?, setId: String? = nil, server: Int = 0
    )
        async throws -> APIResponse
    {
        let body = JSONValue.object([
            ("clientId", .string(userId)), ("walletId", .string(share.walletId)),
            ("setId", .string(setId ?? share.setId.hex)),
            ("clientKey", .string(Hex.encode(SealingKeyPair().publicKey))),
        ])
        return try await world.send(
            .POST, "/wallets/eject", json: body, headers: token.map(world.bearer) ?? [], server: server)
    }
}
