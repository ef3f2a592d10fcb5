import ArgumentParser
import Foundation
import ShareCrypto
import ShareRecovery

/// `demo`: the whole story on embedded defaults.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a wallet by DKG, sign, back it up, lose the device, recover, sign again (both curves).",
        discussion: helpText(
            "Runs the whole story on both curves against a reference server it starts on 127.0.0.1 with SQLite: the wallet is created by DKG with the server as custodian party (no dealer), signs, is backed up, the device is lost and recovered, and it signs again under the same public key while the lost device's share is refused. Each step and the recovery statuses are printed, then the integrator events the story produced (type, account, id: what `events list` shows). With --offline the custodian runs in this process (no signing in that variant).",
            examples: [
                "share-recovery demo",
                "share-recovery demo --offline --directory /tmp/demo",
            ]))

    @Option(help: "Working directory for the demo's stores (a fresh temporary one by default).")
    var directory: String?

    @Flag(help: "Run the custodian in this process instead of against the reference server.")
    var offline = false

    func run() async throws {
        let root =
            directory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("share-recovery-demo-\(UUID().uuidString)")
            .path
        try Files.makeDirectory(root)
        let started = Date()
        if offline {
            say("share-recovery demo, offline (working directory \(root))")
            for curve in Curve.allCases { try await story(curve: curve, root: "\(root)/\(curve)") }
        } else {
            try await ServerDemo(root: root).run()
        }
        say(
            String(
                format: "\ndemo finished in %.1f s: both wallets recovered with their public keys unchanged"
                    + (offline ? "" : " and signed again"), Date().timeIntervalSince(started)))
    }

    private func say(_ line: String) { Terminal.output(line) }

    private func story(curve: Curve, root: String) async throws {
        say("\n== \(curve) wallet ==")
        try Files.makeDirectory(root)
        // Demo-grade Argon2id so the demo runs in seconds; production defaults are 3 passes, 64 MiB.
        let argon2 = try Argon2idParameters(opslimit: 2, memlimitKiB: 19_456)
        let integrator = InMemoryIntegrator()
        let custodian = LocalCustodian(key: SealingKeyPair(), shareSource: integrator)
        let userId = "demo-user-\(curve)"

        // 1. Create the wallet: party 1 on the device, party 2 at the custodian.
        let signing = try KeyGeneration.generate(curve: curve, walletId: "demo-wallet-\(curve)")
        await custodian.register(signingShares: [signing[1]], clientId: userId)
        let device = try FileSigningShareStore(directory: "\(root)/device", argon2: argon2)
        let passcode = SecureBytes(copying: Array("482916".utf8))
        try await device.createPasscode(passcode, confirmation: passcode)
        try await device.stage(signing[0])
        try await device.promoteStaged()
        say("wallet created: public key \(signing[0].publicKey.hex)")
        say("device share: \(signing[0].publicDescription.json())")

        // 2. Back it up with a password and with a cloud key.
        let engine = RecoveryEngine(
            configuration: .init(
                userId: userId, custodian: custodian, shareStore: device, cipherTextSource: integrator,
                cipherTextStore: integrator, custodianBackupSink: integrator, argon2: argon2))
        let password = BackupSecret.text("correct horse battery staple")
        let cloudKey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        let passwordBackup = try await engine.backup(method: .password, secret: password)
        try await engine.backup(method: .cloudKey, secret: cloudKey, keyId: "kms/demo")
        say(
            "backed up: \(try await engine.activatedRecoveryMethods().map(\.name).joined(separator: ", ")) "
                + "(cipherText \(passwordBackup.base64.prefix(24))…)")

        // 3. Lose the device.
        try await device.remove()
        say("device lost: its store is gone")

        // 4. Recover on a new device, fetching the cipherText by backup method.
        let newDevice = try FileSigningShareStore(directory: "\(root)/new-device", argon2: argon2)
        try await newDevice.createPasscode(passcode, confirmation: passcode)
        var configuration = engine.configuration
        configuration.shareStore = newDevice
        let recoveringEngine = RecoveryEngine(configuration: configuration)
        let recovered = try await recoverShowingStatuses(recoveringEngine, method: .password, secret: password)

        // 5. Show what changed and what did not.
        let same = recovered.publicKey == signing[0].publicKey
        say("recovered: generation \(recovered.generation), new set \(recovered.setId), public key unchanged: \(same)")
        let custodianNow = await custodian.currentSigningShares(clientId: userId)
        let oldStillWorks = try oldShareStillCombines(old: signing[0], custodian: custodianNow[0])
        say("old device share combines with the custodian's current share: \(oldStillWorks) (useless, as it should be)")
        guard same, !oldStillWorks else {
            throw ShareRecoveryError(.publicKeyMismatch, "the demo's recovery did not behave as expected")
        }
    }

    /// Whether the lost device's share and the custodian's current share still give the wallet key.
    private func oldShareStillCombines(old: ShareRecord, custodian: ShareRecord) throws -> Bool {
        let lambda1 = try Shamir.lagrangeCoefficientAtZero(index: 1, indices: [1, 2], curve: old.curve)
        let lambda2 = try Shamir.lagrangeCoefficientAtZero(index: 2, indices: [1, 2], curve: old.curve)
        let combined = lambda1 * old.secret! + lambda2 * custodian.secret!
        guard !combined.isZero else { return false }
        return try Point(generatorTimes: combined) == old.publicKey
    }
}

/// Runs a recovery, printing each status with its elapsed time, and checks the sequence is docs/formats.md §8's.
func recoverShowingStatuses(_ engine: RecoveryEngine, method: BackupMethod, secret: BackupSecret) async throws
    -> ShareRecord
{
    let started = Date()
    let statuses = Locked<[RecoveryStatus]>([])
    let recovered = try await engine.recover(method: method, secret: secret) { status in
        statuses.withLock { $0.append(status) }
        Terminal.output(
            String(format: "  status: %@ (%.0f ms)", status.rawValue, Date().timeIntervalSince(started) * 1000))
    }
    guard statuses.withLock({ $0 }) == RecoveryStatus.sequence else {
        throw ShareRecoveryError(.invalidParameters, "the statuses differ from the §8 sequence")
    }
    return recovered
}
