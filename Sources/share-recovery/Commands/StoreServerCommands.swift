import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

extension StoreCommand {
    /// `store recover`: the device recovers into its store, with the server's custodian.
    struct Recover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recover this device's signing share from a backup, with a reference server (recover token).",
            discussion: helpText(
                "Fetches the method's cipherText from the server, opens it with --secret-file (read as for `backup`), reshares with the server's custodian into a new signing set of the next generation, and makes the new share current in --store only after the custodian confirmed it. A backup or recovery of this store that was cut off earlier is settled first (docs/recovery.md). Statuses (readingShare … done) go to stderr as a live line, or as JSON lines with --json. With --sign-token-file (a token of purpose sign) a secp256k1 device then makes its ECDSA pair setup for the new share and keeps it in the store; without it the first `sign --server --mode ecdsa` makes it (the old generation's setup opens with no later share). Prints the new share's public description.",
                examples: [
                    "share-recovery store recover --store device --passcode-file passcode.txt --server http://127.0.0.1:8080 --user-id user-1 --token-file recover.token --method cloudKey --secret-file cloud.key",
                    "share-recovery store recover --store device --passcode-file passcode.txt --server http://127.0.0.1:8080 --user-id user-1 --token-file recover.token --method cloudKey --secret-file cloud.key --sign-token-file sign.token",
                ]))
        @OptionGroup var location: StoreCommand.Location
        @Option(help: "The passcode file.") var passcodeFile: String
        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "The backup method to recover from.") var method: BackupMethod
        @Option(help: "The secret: UTF-8 text (password, recoveryCode) or 32 raw bytes / 64 hex digits.")
        var secretFile: String
        @OptionGroup var progressOptions: ProgressOptions
        @Option(
            help:
                "A token of purpose sign: a secp256k1 device then makes its ECDSA pair setup for the new share and keeps it in --store."
        ) var signTokenFile: String?

        func run() async throws {
            let secret = try Files.readSecret(secretFile, method: method)
            let device = try location.open()
            try await device.authenticate(try StoreCommand.passcode(passcodeFile))
            let engine = try serverOptions.deviceEngine(device)
            let progress = ProgressReporter(json: progressOptions.json)
            // The engine tells its own failure (the `failed` event) before it throws.
            let recovered = try await engine.recover(method: method, secret: secret, events: progress.event)
            if let signTokenFile, let share = try await device.currentShare() {
                let client = HTTPWalletClient(
                    baseURL: serverOptions.server, tokenProvider: try TokenFile.provider(signTokenFile))
                try await KeptSetupPlace.store(device).make(for: share, client: client, clientId: serverOptions.userId)
            }
            Terminal.output(JSONWriter.write(recovered.jsonValue(includingSecret: false)))
        }
    }

    /// `store resume`: settles a backup or recovery that was cut off.
    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle a backup or recovery of this store that was cut off (a token of its purpose).",
            discussion: helpText(
                "Asks the server's custodian what became of the session the store recorded (`store show` prints it as pendingSession): a confirmed recovery's staged share becomes current, an unconfirmed one is discarded and its session abandoned. Every backup, recovery and method change does this first; this command does it alone. Prints {\"outcome\": \"nothingToResume\" | \"completed\" | \"rolledBack\", \"purpose\": \"backup\" | \"recovery\" | null}. The token must be of the session's purpose: recover for a recovery, addOrUpdateRecovery for a backup.",
                examples: [
                    "share-recovery store resume --store device --passcode-file passcode.txt --server http://127.0.0.1:8080 --user-id user-1 --token-file recover.token"
                ]))
        @OptionGroup var location: StoreCommand.Location
        @Option(help: "The passcode file.") var passcodeFile: String
        @OptionGroup var serverOptions: ServerOptions

        func run() async throws {
            let engine = try await serverOptions.deviceEngine(location: location, passcodeFile: passcodeFile)
            let (outcome, purpose): (String, PendingSession.Purpose?) =
                switch try await engine.resumeInterruptedOperation() {
                case .nothingToResume: ("nothingToResume", nil)
                case .completed(let purpose): ("completed", purpose)
                case .rolledBack(let purpose): ("rolledBack", purpose)
                }
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("outcome", .string(outcome)),
                        ("purpose", purpose.map { .string($0.name) } ?? .null),
                    ])))
        }
    }
}

extension ServerOptions {
    /// An engine on the device's store (unlocked) without a webhook secret: recovery and resume
    /// deliver nothing to the integrator's webhook.
    func deviceEngine(location: StoreCommand.Location, passcodeFile: String) async throws -> RecoveryEngine {
        let device = try location.open()
        try await device.authenticate(try StoreCommand.passcode(passcodeFile))
        return try deviceEngine(device)
    }

    /// An engine on an unlocked store, as above.
    func deviceEngine(_ device: FileSigningShareStore) throws -> RecoveryEngine {
        RecoveryEngine(
            configuration: ReferenceServerClient(base: server).engineConfiguration(
                userId: userId, store: device, tokens: try tokens(), webhookSecret: nil))
    }
}
