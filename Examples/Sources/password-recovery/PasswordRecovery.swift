// password-recovery: the whole life of a wallet's backup, in one process, through the public API.
//
// A 2-of-2 wallet (party 1 on the device, party 2 at the custodian), created by distributed key
// generation, is backed up under a password; the device is lost; a new device recovers a new
// signing share from the cipherText and the custodian's backup share, with a live progress line,
// under the same public key, and signs with the custodian's new share.
//
// The custodian runs in this process (LocalCustodian), and InMemoryIntegrator stands in for the
// wallet service's backend that stores cipherTexts and custodian backup shares.

import ExampleSupport
import Foundation
import ShareCrypto
import ShareRecovery

@main
struct PasswordRecovery {
    static func main() async {
        await runExample {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("password-recovery-\(UUID())")
                .path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }

            // 1. A wallet, created by distributed key generation: device (party 1) and custodian (party 2)
            //    each draw their own polynomial, so the key exists nowhere. Here both run in this process.
            let integrator = InMemoryIntegrator()
            let custodian = LocalCustodian(key: SealingKeyPair(), shareSource: integrator)
            let shares = try DistributedKeyGeneration.run(
                parameters: DKGParameters(curve: .secp256k1, walletId: "example-wallet", threshold: 2, parties: 2))
            await custodian.register(signingShares: [shares[1]], clientId: "example-user")
            print("wallet: public key \(shares[0].publicKey.hex)")

            // 2. The device keeps its share in a passcode-protected store.
            let passcode = SecureBytes(copying: Array("482916".utf8))
            let device = try FileSigningShareStore(directory: "\(directory)/device")
            try await device.createPasscode(passcode, confirmation: passcode)
            try await device.stage(shares[0])
            try await device.promoteStaged()

            // 3. Back up under a password: a new backup set with the custodian, the user's half encrypted.
            var configuration = RecoveryEngine.Configuration(
                userId: "example-user", custodian: custodian, shareStore: device, cipherTextSource: integrator,
                cipherTextStore: integrator, custodianBackupSink: integrator)
            let password = BackupSecret.text("correct horse battery staple")
            let cipherText = try await RecoveryEngine(configuration: configuration).backup(
                method: .password, secret: password)
            print("backed up: cipherText of \(cipherText.base64.count) base64 characters")

            // 4. The device is lost.
            try await device.remove()

            // 5. A new device recovers; the cipherText is fetched by backup method from the integrator.
            let newDevice = try FileSigningShareStore(directory: "\(directory)/new-device")
            try await newDevice.createPasscode(passcode, confirmation: passcode)
            configuration.shareStore = newDevice
            let progress = ProgressLine()
            let recovered = try await RecoveryEngine(configuration: configuration).recover(
                method: .password, secret: password, progress: progress.show)

            // 6. Same wallet, new generation: the lost device's share no longer matches the custodian's.
            guard recovered.publicKey == shares[0].publicKey, recovered.generation == shares[0].generation + 1 else {
                throw ShareRecoveryError(.publicKeyMismatch, "the recovered share is not of this wallet")
            }
            print("recovered: generation \(recovered.generation), public key unchanged")

            // 7. The recovered share signs with the custodian's new share under the same key (BIP-340).
            let custodianShare = await custodian.currentSigningShares(clientId: "example-user")[0]
            let message = Array("pay bob 1 coin".utf8)
            let (_, signature) = try ThresholdSigning.sign(shares: [recovered, custodianShare], message: message)
            guard
                SignatureVerifier.verify(
                    signature: signature, message: message, publicKey: recovered.publicKey, mode: .bip340)
            else {
                throw ShareRecoveryError(.invalidSignatureShare, "the signature does not verify")
            }
            print("signed after recovery: a BIP-340 signature that verifies under the wallet key")
        }
    }
}
