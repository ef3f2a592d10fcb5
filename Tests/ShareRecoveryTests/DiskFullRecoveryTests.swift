#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import TestSupport
import Testing

@testable import ShareRecovery

/// A recovery whose new share cannot be written (the disk is full at one step of staging, injected
/// through the store's fault hook): a typed error, the old generation current byte for byte and
/// still opening with the passcode, nothing staged, and the custodian still on the old set.
@Suite("Disk full during recovery")
struct DiskFullRecoveryTests {
    typealias Support = StoreTestSupport
    static let pin = Support.passcode("482916")

    /// Every file-system step of `stage` (create, write, fsync, rename, fsync directory); the
    /// custodian is confirmed only after them, so all of them must leave everything as it was.
    @Test(arguments: 1...5)
    func noSpaceWhileStagingKeepsTheOldGeneration(step: Int) async throws {
        let random = DeterministicRandom(seed: Array("disk full \(step)".utf8))
        let signing = try KeyGeneration.generate(curve: .ed25519, walletId: "w-full", using: random)
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: SealingKeyPair(using: random), shareSource: integrator, random: random)
        await custodian.register(signingShares: [signing[1]], clientId: "user-full")
        let directory = Support.makeDirectory("disk-full")
        defer { Support.removeDirectory(directory) }
        let cloudKey = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        let script = StoreFaultScript()
        let currentBytes: Data
        do {
            let store = try await Support.open(directory, faultHook: script.hook)
            try await store.createPasscode(Self.pin, confirmation: Self.pin)
            try await store.stage(signing[0])
            try await store.promoteStaged()
            let engine = RecoveryEngine(
                configuration: .init(
                    userId: "user-full", custodian: custodian, shareStore: store, cipherTextSource: integrator,
                    cipherTextStore: integrator, custodianBackupSink: integrator, argon2: .minimum, random: random))
            try await engine.backup(method: .cloudKey, secret: cloudKey)
            currentBytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/current.share"))

            // The recovery's first five steps record its session (pending.session); staging follows.
            script.arm(faultAt: step + 5, fault: .fail(ENOSPC))
            let log = StatusLog()
            let error = await Support.expectError(.storageFailure) {
                try await engine.recover(method: .cloudKey, secret: cloudKey, progress: log.append)
            }
            script.disarm()
            let faulted = try #require(script.faultedStep, "the recovery made fewer than \(step + 5) file-system steps")
            #expect(!faulted.description.contains("current.share"), "step \(step) is a promotion step: \(faulted)")
            #expect(error?.reason.contains(String(cString: strerror(ENOSPC))) == true, "\(String(describing: error))")
            #expect(log.all.last == .storingShare, "\(log.all)")
            #expect(try await store.currentShare() == signing[0])
            #expect(try await store.stagedShare() == nil, "fault at \(faulted): an unconfirmed share stayed staged")
            #expect(await custodian.currentSigningShares(clientId: "user-full") == [signing[1]])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/current.share")) == currentBytes)
        #expect(Support.names(in: directory) == ["current.share", "header", "lock"])

        // A fresh store object opens with the passcode at the old generation, and the backup still
        // recovers once there is space again.
        let reopened = try await Support.open(directory)
        try await reopened.authenticate(Self.pin)
        #expect(try await reopened.currentShare() == signing[0])
        let engine = RecoveryEngine(
            configuration: .init(
                userId: "user-full", custodian: custodian, shareStore: reopened, cipherTextSource: integrator,
                argon2: .minimum, random: random))
        let recovered = try await engine.recover(method: .cloudKey, secret: cloudKey)
        #expect(recovered.generation == 1 && recovered.publicKey == signing[0].publicKey)
        #expect(try await reopened.currentShare() == recovered)
    }
}
