import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// A wallet's devices (docs/devices.md): each device's own 2-of-2 set with the custodian, added by
/// resharing from an approving device's set, removed by deleting the custodian's share of it.
@Suite("Devices: add, sign from each, remove, recover")
struct DeviceTests {
    static func configure(_ configuration: inout ServerConfiguration) {
        WalletSessionTests.unlimitedFlows(&configuration)
        configuration.maximumDevicesPerWallet = 3
    }

    /// Signs through the server and checks the signature under `key`; returns the HTTP status of a refusal.
    static func signs(
        _ world: TestWorld, _ share: ShareRecord, user: String, token: String, key: Point, server: Int = 0
    ) async throws
        -> Bool
    {
        let message = Array("device \(share.setId.hex)".utf8)
        let opened = try await WalletWire.openSigning(
            world: world, share: share, userId: user, mode: .bip340, token: token, server: server)
        guard opened.status == 201 else {
            #expect(opened.status == 409 && opened.errorCode == "conflict", "\(opened.text)")
            return false
        }
        let signature = try await WalletWire.sign(
            world: world, share: share, userId: user, message: message, mode: .bip340, token: token, server: server)
        return SignatureVerifier.verify(signature: signature, message: message, publicKey: key, mode: .bip340)
    }

    @Test(
        "add a device, sign from each, remove one (its share is refused, the others sign under the same key), the limit, recover, sign and add again",
        arguments: TestBackend.allCases)
    func lifecycle(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2, configure: Self.configure) { world in
            let user = "devices-\(backend)"
            let sign = try await world.token(for: user, purpose: "sign")
            let primary = try await WalletWire.createWallet(
                world: world, userId: user, walletId: "w-devices", curve: .secp256k1, token: sign)
            let key = primary.publicKey

            // A backup of the primary device, for the recovery at the end.
            let client = SessionClient(world: world, clientId: user)
            let addRecovery = try await world.token(for: user, purpose: "addOrUpdateRecovery")
            let backup = try await client.open(
                purpose: "backup", method: .password, ownShare: primary, token: addRecovery)
            let backupFinished = try await client.finish(backup, token: addRecovery)
            try #require(backupFinished.status == 200, "\(backupFinished.text)")
            try await client.deliverBackupShares(of: backupFinished)
            try #require(try await client.confirm(backup.sessionId, token: addRecovery).status == 204)

            // Two devices: the phone approved by the primary device, the tablet by the phone.
            let add = try await world.token(for: user, purpose: "addDevice")
            let phone = try await DeviceWire.add(
                world: world, approver: primary, userId: user, deviceId: "phone", token: add)
            let tablet = try await DeviceWire.add(
                world: world, approver: phone, userId: user, deviceId: "tablet", token: add, server: 1)
            for share in [phone, tablet] {
                #expect(
                    share.publicKey == key && share.partyIndex == 1 && share.threshold == 2 && share.kind == .signing)
                #expect(share.setId != primary.setId && share.generation == primary.generation)
            }
            #expect(phone.setId != tablet.setId)
            #expect(phone.secret != primary.secret && tablet.secret != phone.secret, "each device's share is its own")
            #expect(try await DeviceWire.list(world: world, token: sign) == ["primary", "phone", "tablet"])

            // Every device signs under the one key, through either server.
            for (index, share) in [primary, phone, tablet].enumerated() {
                #expect(try await Self.signs(world, share, user: user, token: sign, key: key, server: index % 2))
            }

            // The limit (3 here): a fourth device is refused, typed, and stores nothing.
            let refused = try await DeviceWire.approve(
                world: world, approver: primary, userId: user, deviceId: "laptop",
                deviceKey: SealingKeyPair().publicKey, token: add)
            #expect(refused.status == 409 && refused.errorCode == "deviceLimitReached", "\(refused.text)")
            #expect(try await DeviceWire.list(world: world, token: sign).count == 3)

            // Remove the phone: its share is refused; the tablet (approved by it) and the primary still sign.
            let remove = try await world.token(for: user, purpose: "removeDevice")
            #expect(try await DeviceWire.remove(world: world, deviceId: "phone", token: remove).status == 204)
            let spent = try await DeviceWire.remove(world: world, deviceId: "tablet", token: remove)
            #expect(spent.status == 401, "a removeDevice token is single use: \(spent.text)")
            #expect(try await Self.signs(world, phone, user: user, token: sign, key: key) == false)
            #expect(try await Self.signs(world, tablet, user: user, token: sign, key: key, server: 1))
            #expect(try await Self.signs(world, primary, user: user, token: sign, key: key))
            #expect(try await DeviceWire.list(world: world, token: sign) == ["primary", "tablet"])
            // A removed device cannot approve another; the primary one cannot be removed.
            let fromRemoved = try await DeviceWire.open(
                world: world, approver: phone, userId: user, deviceId: "watch", deviceKey: SealingKeyPair().publicKey,
                token: add)
            #expect(fromRemoved.status == 409, "\(fromRemoved.text)")
            let removePrimary = try await world.token(for: user, purpose: "removeDevice")
            #expect(try await DeviceWire.remove(world: world, deviceId: "primary", token: removePrimary).status == 409)
            #expect(try await DeviceWire.remove(world: world, deviceId: "phone", token: removePrimary).status == 404)

            // Recover from the backup: the recovered device signs under the same key; every earlier set is refused.
            let recover = try await world.token(for: user, purpose: "recover")
            let recovery = try await client.open(
                purpose: "recovery", method: .password, ownShare: backup.newShare, token: recover)
            try #require(try await client.finish(recovery, token: recover).status == 200)
            try #require(try await client.confirm(recovery.sessionId, token: recover).status == 204)
            let recovered = recovery.newShare
            #expect(recovered.publicKey == key)
            #expect(try await Self.signs(world, recovered, user: user, token: sign, key: key))
            for old in [primary, tablet] {
                #expect(try await Self.signs(world, old, user: user, token: sign, key: key) == false)
            }
            #expect(try await DeviceWire.list(world: world, token: sign) == ["primary"])

            // The recovered device approves a new one, which signs.
            let laptop = try await DeviceWire.add(
                world: world, approver: recovered, userId: user, deviceId: "laptop", token: add)
            #expect(try await Self.signs(world, laptop, user: user, token: sign, key: key, server: 1))

            // Audited in the transactions that made the changes.
            let storage = try world.inspector()
            defer { Task { await storage.close() } }
            let events = try await storage.transaction { transaction in
                try await transaction.query(
                    "SELECT event, detail FROM audit_events WHERE account = ? AND event IN ('deviceAdded', 'deviceRemoved') ORDER BY seq",
                    [.text(user)]
                ).map { "\(try $0.text("event")) \(try $0.text("detail"))" }
            }
            #expect(events.count == 4, "\(events)")
            #expect(events[0].hasPrefix("deviceAdded ") && events[0].contains(#""deviceId":"phone""#))
            #expect(events[2] == #"deviceRemoved {"deviceId":"phone"}"#)
            #expect(events[3].contains(#""deviceId":"laptop""#) && events[3].contains(laptop.setId.hex))
        }
    }

    @Test("the HTTP client: add, join, sign, list, remove; refusals are typed", arguments: TestBackend.allCases)
    func httpClient(backend: TestBackend) async throws {
        try await TestWorld.with(backend, configure: Self.configure) { world in
            let user = "devices-client-\(backend)"
            let sign = try await world.token(for: user, purpose: "sign")
            let add = try await world.token(for: user, purpose: "addDevice")
            let base = world.servers[0].baseURL()
            let wallet = HTTPWalletClient(baseURL: base, tokenProvider: { _ in sign })
            let primary = try await wallet.createWallet(clientId: user, walletId: "w", curve: .ed25519)
            let devices = HTTPWalletClient(baseURL: base, tokenProvider: { purpose in purpose == .sign ? sign : add })
            let key = SealingKeyPair()
            // Before approval there is nothing to join.
            await #expect(throws: ShareRecoveryError.self) {
                try await devices.joinDevice(deviceId: "phone", keyPair: key)
            }
            let added = try await devices.approveDevice(
                share: primary, clientId: user, deviceId: "phone", deviceKey: key.publicKey)
            #expect(added.deviceId == "phone" && added.approvedBy == primary.setId.hex)
            // Sub-shares sealed to another key do not open; the expected wallet key is checked.
            await #expect(throws: ShareRecoveryError.self) {
                try await devices.joinDevice(deviceId: "phone", keyPair: SealingKeyPair())
            }
            let stranger = try KeyGeneration.generate(curve: .ed25519, walletId: "x")[0].publicKey
            await #expect(throws: ShareRecoveryError.self) {
                try await devices.joinDevice(deviceId: "phone", keyPair: key, walletPublicKey: stranger)
            }
            let phone = try await devices.joinDevice(
                deviceId: "phone", keyPair: key, walletPublicKey: primary.publicKey)
            #expect(phone.setId.hex == added.setId)
            for share in [primary, phone] {
                let (_, signature) = try await wallet.sign(share: share, clientId: user, message: [7])
                #expect(
                    SignatureVerifier.verify(
                        signature: signature, message: [7], publicKey: primary.publicKey, mode: .rfc9591))
            }
            let listed = try await devices.devices()
            #expect(listed.devices.map(\.deviceId) == ["primary", "phone"] && listed.maximum == 3)
            // A taken id is refused.
            await #expect(throws: TransportError.self) {
                try await devices.approveDevice(
                    share: primary, clientId: user, deviceId: "phone", deviceKey: key.publicKey)
            }
            // A third device fills the wallet (limit 3); a fourth is refused with the typed code.
            _ = try await devices.approveDevice(
                share: phone, clientId: user, deviceId: "tablet", deviceKey: SealingKeyPair().publicKey)
            do {
                _ = try await devices.approveDevice(
                    share: primary, clientId: user, deviceId: "laptop", deviceKey: SealingKeyPair().publicKey)
                Issue.record("a fourth device was added")
            } catch let error as TransportError {
                #expect(error.code == .deviceLimitReached && error.status == 409, "\(error)")
            }
            let remover = HTTPWalletClient(
                baseURL: base, tokenProvider: { _ in try await world.token(for: user, purpose: "removeDevice") })
            try await remover.removeDevice(deviceId: "phone")
            await #expect(throws: TransportError.self) {
                try await wallet.sign(share: phone, clientId: user, message: [8])
            }
            let (_, signature) = try await wallet.sign(share: primary, clientId: user, message: [8])
            #expect(
                SignatureVerifier.verify(
                    signature: signature, message: [8], publicKey: primary.publicKey, mode: .rfc9591))
        }
    }
}
