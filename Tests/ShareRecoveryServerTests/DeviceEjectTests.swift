import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import TestSupport
import Testing

@testable import ShareRecoveryServer

/// Eject (docs/eject.md) of a wallet with devices (docs/devices.md): any current device's set
/// rebuilds the key, and afterwards the wallet is gone for every device.
@Suite("Eject with devices: from an added device; then no device signs or joins")
struct DeviceEjectTests {
    @Test(
        "an added device ejects; the primary and the device are refused, no device joins, the devices' shares are deleted",
        arguments: TestBackend.allCases)
    func ejectFromAnAddedDevice(backend: TestBackend) async throws {
        try await TestWorld.with(backend, servers: 2, configure: DeviceTests.configure) { world in
            let user = "device-eject-\(backend)"
            let sign = try await world.token(for: user, purpose: "sign")
            let primary = try await WalletWire.createWallet(
                world: world, userId: user, walletId: "w-eject", curve: .secp256k1, token: sign)
            let add = try await world.token(for: user, purpose: "addDevice")
            let phone = try await DeviceWire.add(
                world: world, approver: primary, userId: user, deviceId: "phone", token: add)
            let removed = try await DeviceWire.add(
                world: world, approver: primary, userId: user, deviceId: "old", token: add)
            let remove = try await world.token(for: user, purpose: "removeDevice")
            #expect(try await DeviceWire.remove(world: world, deviceId: "old", token: remove).status == 204)

            // A removed device's set no longer signs, so it cannot eject; nothing changes.
            let stale = try await WalletWire.eject(
                world: world, share: removed, userId: user, token: try await world.token(for: user, purpose: "eject"))
            #expect(stale.status == 409 && stale.errorCode == "conflict", "\(stale.text)")
            #expect(try await DeviceTests.signs(world, phone, user: user, token: sign, key: primary.publicKey))

            // The phone ejects through the client: the key it rebuilds is the wallet's.
            let eject = try await world.token(for: user, purpose: "eject", server: 1)
            let client = HTTPWalletClient(baseURL: world.servers[1].baseURL(), tokenProvider: { _ in eject })
            let key = try await client.eject(share: phone, clientId: user)
            let hex = String(decoding: key.privateKeyHex.revealedBytes(), as: UTF8.self)
            #expect(ExportedKeyCheck.publicKey(ofHex: hex, curve: .secp256k1) == primary.publicKey.rawRepresentation)

            // Afterwards every device is refused, no device joins, and the custodian holds no device share.
            for share in [primary, phone] {
                let opened = try await WalletWire.openSigning(
                    world: world, share: share, userId: user, mode: .bip340, token: sign)
                #expect(opened.status == 409 && opened.errorCode == "walletEjected", "\(opened.text)")
            }
            let joining = try await DeviceWire.approve(
                world: world, approver: phone, userId: user, deviceId: "laptop", deviceKey: SealingKeyPair().publicKey,
                token: add)
            #expect(joining.status == 409 && joining.errorCode == "walletEjected", "\(joining.text)")
            let storage = try world.inspector()
            let deviceRows = try await storage.transaction { transaction in
                try await transaction.query("SELECT device_id FROM wallet_devices WHERE client_id = ?", .text(user))
                    .count
            }
            await storage.close()
            #expect(deviceRows == 0)
        }
    }
}
