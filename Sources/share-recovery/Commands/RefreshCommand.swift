import ArgumentParser
import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `refresh --server`: the device's signing share and the custodian's reshared in place into the next
/// generation (docs/formats.md §3), so a share that leaked before signs nothing after.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Refresh this device's signing share with a reference server (same key, next generation).",
        discussion: helpText(
            "Reshares the device's signing set with the server's custodian into a new signing set of the same parties and threshold, one generation later, under the same public key and addresses (docs/formats.md §3). Both sides check every dealing before keeping anything; the custodian then keeps only the new set, so the old share (and any copy that leaked) signs nothing after. Needs a token of purpose sign (`otp start --purpose sign`, then `otp verify`).\n\nWith --store the new share is staged in the store and becomes current only after the custodian confirmed it; a refresh cut off midway is settled by the next operation or by `store resume` (with a sign token), and the old share stays current until then. With --signing-share the new share is written to --out (a new file, mode 0600) before the confirm and deleted again if the custodian did not take it. A secp256k1 device then makes its ECDSA pair setup for the new share and keeps it (in the store, or in --out.pairsetup). Prints the new share's public description.",
            examples: [
                "share-recovery refresh --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --store device --passcode-file passcode.txt",
                "share-recovery refresh --server http://127.0.0.1:8080 --user-id user-1 --token-file sign.token --signing-share device-share.json --out device-share-2.json",
            ]))

    @OptionGroup var serverOptions: ServerOptions
    @Option(help: "The device's share store (its current share is refreshed).") var store: String?
    @Option(help: "With --store: the store's passcode file.") var passcodeFile: String?
    @Option(name: .customLong("signing-share"), help: "Instead of --store: the device's share file, with its secret.")
    var signingShare: String?
    @Option(help: "With --signing-share: where to write the new share (a new file, mode 0600).") var out: String?

    func run() async throws {
        if (store == nil) != (passcodeFile == nil) { throw CLIError.usage("--store and --passcode-file go together") }
        if (signingShare == nil) != (out == nil) { throw CLIError.usage("--signing-share and --out go together") }
        guard (store == nil) != (signingShare == nil) else {
            throw CLIError.usage(
                "give this device's share: --store and --passcode-file, or --signing-share and --out")
        }
        let client = HTTPWalletClient(baseURL: serverOptions.server, tokenProvider: try serverOptions.tokens())
        let refreshed: ShareRecord
        let place: KeptSetupPlace
        if let store, let passcodeFile {
            let device = try FileSigningShareStore(directory: store)
            try await device.authenticate(try StoreCommand.passcode(passcodeFile))
            refreshed = try await serverOptions.deviceEngine(device).refresh()
            place = .store(device)
        } else if let signingShare, let out {
            if FileManager.default.fileExists(atPath: out) {
                throw CLIError.outputExists("\(out) exists; refresh writes the new share only to a new file")
            }
            let staging = ShareFileStaging(current: try Files.readShare(signingShare), out: out)
            refreshed = try await RecoveryEngine(
                configuration: ReferenceServerClient(base: serverOptions.server).engineConfiguration(
                    userId: serverOptions.userId, store: staging, tokens: try serverOptions.tokens(),
                    webhookSecret: nil)
            ).refresh()
            place = .file(besideShare: out)
        } else {
            throw CLIError.usage("give this device's share: --store and --passcode-file, or --signing-share and --out")
        }
        try await place.make(for: refreshed, client: client, clientId: serverOptions.userId)
        Terminal.output(refreshed.json())
    }
}

/// A share file refreshed into a new file: the engine's store for `refresh --signing-share`. The new
/// share is written to `out` when staged (before the custodian's confirm) and deleted when discarded,
/// so `out` exists after a run exactly when the custodian may hold its set; the session record stays
/// in memory (a process cut off leaves `out`, which signs if the confirm landed).
actor ShareFileStaging: SigningShareStore {
    private var current: ShareRecord?
    private var staged: ShareRecord?
    private var pending: PendingSession?
    private let out: String

    init(current: ShareRecord, out: String) {
        self.current = current
        self.out = out
    }

    func currentShare() -> ShareRecord? { current }
    func stagedShare() -> ShareRecord? { staged }

    func stage(_ share: ShareRecord) throws {
        try Files.write(share.json(includingSecret: true) + "\n", to: out, secret: true)
        staged = share
    }

    func promoteStaged() throws {
        guard let staged else { throw ShareRecoveryError(.storageFailure, "nothing is staged") }
        current = staged
        self.staged = nil
    }

    func discardStaged() throws {
        if staged != nil, FileManager.default.fileExists(atPath: out) {
            try FileManager.default.removeItem(atPath: out)
        }
        staged = nil
    }

    func pendingSession() -> PendingSession? { pending }
    func recordPendingSession(_ session: PendingSession) { pending = session }
    func clearPendingSession() { pending = nil }
}
