import ArgumentParser
import RecoveryKit
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `kit …`: SLIP-39 paper recovery kits for the user backup share.
struct KitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kit", abstract: "Paper recovery kits (SLIP-39) for the user backup share.",
        discussion: helpText(
            "A kit writes the user's backup share as SLIP-39 mnemonics on paper. `kit create` makes one as a recovery method on a reference server; `kit export` turns an existing cipherText's share into mnemonics; `kit recover` recovers from the mnemonics and the custodian's backup shares. Mnemonics are secrets: commands that print them need --reveal-secret.\n\n--groups: `1of1` (one mnemonic), `2of3` (any 2 of 3), or GROUP_THRESHOLD:GROUP,GROUP,… such as `2:1of1,2of3` (two groups of the three needed).",
            examples: [
                "share-recovery kit export --cipher-text backup/cipherText --secret-file password.txt --groups 2of3 --reveal-secret > kit.txt",
                "share-recovery kit recover --mnemonics-file two-of-kit.txt --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key --out recovered",
            ]),
        subcommands: [Export.self, Combine.self, RecoverFromKit.self, Create.self, Status.self])

    /// `1of1`, `2of3`, or several groups with a group threshold: `2:1of1,2of3,3of5`.
    struct Layout: ExpressibleByArgument {
        let groupThreshold: Int
        let groups: [SLIP39.Group]

        init?(argument: String) {
            var text = Substring(argument)
            var threshold = 1
            if let colon = text.firstIndex(of: ":") {
                guard let value = Int(text[..<colon]) else { return nil }
                threshold = value
                text = text[text.index(after: colon)...]
            }
            var groups: [SLIP39.Group] = []
            for part in text.split(separator: ",") {
                let numbers = part.split(separator: "o").map { $0.hasPrefix("f") ? $0.dropFirst() : $0 }
                guard numbers.count == 2, let t = Int(numbers[0]), let n = Int(numbers[1]) else { return nil }
                groups.append(SLIP39.Group(memberThreshold: t, memberCount: n))
            }
            guard !groups.isEmpty else { return nil }
            groupThreshold = threshold
            self.groups = groups
        }

        /// The layout as it is typed (`1of1`, `2:1of1,2of3`), for the help's default.
        var defaultValueDescription: String {
            let groupText = groups.map { "\($0.memberThreshold)of\($0.memberCount)" }.joined(separator: ",")
            return groupThreshold == 1 && groups.count == 1 ? groupText : "\(groupThreshold):\(groupText)"
        }
    }

    /// The mnemonics on stdout, one per line, each group announced on stderr. Mnemonics are the kit:
    /// printing them is the point of the commands that call this (behind `--reveal-secret`).
    static func printKit(_ kit: [[SLIP39.Share]], layout: Layout) {
        for (groupIndex, group) in kit.enumerated() {
            Terminal.error("group \(groupIndex + 1): \(layout.groups[groupIndex]) shares")
            for member in group { Terminal.output(member.revealedMnemonic()) }
        }
    }

    static func passphrase(_ path: String?) throws -> SecureBytes {
        guard let path else { return SecureBytes(zeros: 0) }
        return try Files.readSecretLine(path)
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the cipherText's user backup share as SLIP-39 mnemonics, one per line (a secret!).",
            discussion: helpText(
                "Prints one mnemonic per line on stdout (each group announced on stderr). The optional passphrase is part of the kit: without it the kit recovers a different, useless share. --groups: `1of1`, `2of3`, or GROUP_THRESHOLD:GROUP,… such as `2:1of1,2of3`.",
                examples: [
                    "share-recovery kit export --cipher-text backup/cipherText --secret-file password.txt --groups 2of3 --reveal-secret > kit.txt"
                ]))
        @Option(help: "The cipherText file.") var cipherText: String
        @Option(help: "The cipherText's secret file.") var secretFile: String
        @Option(help: "Layout: 1of1, 2of3, or GROUP_THRESHOLD:1of1,2of3,….") var groups = Layout(argument: "1of1")!
        @Option(help: "Optional SLIP-39 passphrase file (printable ASCII).") var passphraseFile: String?
        @Flag(help: "Required: the mnemonics are the secret, printed on stdout.") var revealSecret = false

        func run() throws {
            guard revealSecret else { throw CLIError.usage("kit export prints secret mnemonics; pass --reveal-secret") }
            let envelope = try CipherText(base64: try Files.readTrimmedLine(cipherText))
            let share = try envelope.decrypt(secret: try Files.readSecret(secretFile, method: envelope.method))
            let kit = try BackupShareKit.export(
                share, groupThreshold: groups.groupThreshold, groups: groups.groups,
                passphrase: try passphrase(passphraseFile))
            printKit(kit, layout: groups)
        }
    }

    struct Combine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Combine mnemonics and print the master secret in hex.",
            discussion: helpText(
                "--mnemonics-file holds mnemonics of one kit, one per line: exactly the threshold of each group needed (SLIP-39 refuses extra ones, error tooManyMembers). The master secret (the backup share's scalar) is printed in hex: a secret.",
                examples: [
                    "share-recovery kit combine --mnemonics-file two-of-kit.txt --reveal-secret"
                ]))
        @Option(help: "A file with one mnemonic per line.") var mnemonicsFile: String
        @Option(help: "Optional SLIP-39 passphrase file.") var passphraseFile: String?
        @Flag(help: "Required: the master secret is printed on stdout.") var revealSecret = false

        func run() throws {
            guard revealSecret else {
                throw CLIError.usage("kit combine prints the master secret; pass --reveal-secret")
            }
            let shares = try SLIP39.decodeMnemonics(lines: SecureBytes(copying: try Files.read(mnemonicsFile)))
            let secret = try SLIP39.combine(shares, passphrase: try passphrase(passphraseFile))
            Terminal.output(Hex.encode(secret.revealedBytes()))
        }
    }

    struct RecoverFromKit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "recover", abstract: "Recover a new signing set from a kit and the custodian's backup shares.",
            discussion: helpText(
                "--mnemonics-file holds exactly the threshold of mnemonics of each group needed, one per line (SLIP-39 refuses extra ones). Combines them into the user backup share, then recovers as `recover` does, with the same statuses: --custodian-shares is a file with a JSON array of §6 strings, --custodian-key the custodian's secret key file.",
                examples: [
                    "share-recovery kit recover --mnemonics-file two-of-kit.txt --custodian-shares backup/custodian-backup-shares.json --custodian-key custodian/custodian.key --out recovered"
                ]))
        @Option(help: "A file with one mnemonic per line.") var mnemonicsFile: String
        @Option(help: "Optional SLIP-39 passphrase file.") var passphraseFile: String?
        @Option(
            help:
                "A file with a JSON array of custodian backup share strings (custodian-backup-shares.json from `backup`)."
        ) var custodianShares: String
        @Option(
            help:
                "A file with the custodian's X25519 secret key, 64 hex digits (custodian.key from `custodian keypair`)."
        ) var custodianKey: String
        @Option(help: "Output directory for the new signing set.") var out: String
        @OptionGroup var progressOptions: ProgressOptions

        func run() async throws {
            let progress = ProgressReporter(json: progressOptions.json)
            let output = out
            do {
                progress.report(.readingShare)
                let shares = try SLIP39.decodeMnemonics(lines: SecureBytes(copying: try Files.read(mnemonicsFile)))
                let candidates = try Files.readCustodianShares(custodianShares)
                let key = try Files.readCustodianKey(custodianKey)
                progress.report(.decryptingShare)
                let secret = try SLIP39.combine(shares, passphrase: try passphrase(passphraseFile))
                progress.report(.parsingShare)
                let (userShare, method) = try BackupShareKit.userShare(
                    masterSecret: secret, custodianShares: candidates)
                let recovered = try await OfflineRecovery.recover(
                    userShare: userShare, method: method, custodianShares: candidates, custodianKey: key,
                    store: { try Files.writeSigningSet($0, to: output) }, progress: progress.report)
                Terminal.output(JSONWriter.write(.array(recovered.map { $0.jsonValue(includingSecret: false) })))
            } catch {
                progress.failed(error)
                throw error
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: """
                Make a kit as a recovery method on a reference server (addOrUpdateRecovery token): a new backup set in \
                the recoveryCode slot, printed as mnemonics; any earlier kit or typed recovery code stops working.
                """,
            discussion: helpText(
                "Needs an addOrUpdateRecovery token, the device store and its passcode, and the webhook secret (as `methods add`). The kit takes the recoveryCode slot: a typed recovery code or an earlier kit stops working. --groups: `1of1`, `2of3`, or GROUP_THRESHOLD:GROUP,… such as `2:1of1,2of3`.",
                examples: [
                    "share-recovery kit create --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --webhook-secret-file share-recovery.sqlite.webhook-secret --store device --passcode-file passcode.txt --groups 2of3 --reveal-secret > kit.txt"
                ]))
        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "The integrator's webhook secret file (delivers the custodian backup share).")
        var webhookSecretFile: String
        @Option(help: "The device's signing share store directory.") var store: String
        @Option(help: "The store's passcode file.") var passcodeFile: String
        @Option(help: "Layout: 1of1, 2of3, or GROUP_THRESHOLD:1of1,2of3,….") var groups = Layout(argument: "1of1")!
        @Option(help: "Optional SLIP-39 passphrase file (printable ASCII).") var passphraseFile: String?
        @OptionGroup var kdf: KDFOptions
        @Flag(help: "Required: the mnemonics are the secret, printed on stdout.") var revealSecret = false

        func run() async throws {
            guard revealSecret else { throw CLIError.usage("kit create prints secret mnemonics; pass --reveal-secret") }
            guard kdf.keyId.isEmpty else { throw CLIError.usage("a kit's cipherText has its own keyId; drop --key-id") }
            let engine = try await serverOptions.deviceEngine(
                store: store, passcodeFile: passcodeFile, webhookSecretFile: webhookSecretFile,
                argon2: try kdf.parameters())
            let kit = try await engine.createRecoveryKit(
                groupThreshold: groups.groupThreshold, groups: groups.groups, passphrase: try passphrase(passphraseFile)
            )
            printKit(kit, layout: groups)
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Whether the recoveryCode slot holds a kit rather than a typed code (recover token: reads its header).",
            discussion: helpText(
                "Prints {\"recoveryKit\": true|false}; needs a recover token (it reads the cipherText's header).",
                examples: [
                    "share-recovery kit status --server http://127.0.0.1:8080 --user-id user-1 --token-file recover.token"
                ]))
        @OptionGroup var serverOptions: ServerOptions

        func run() async throws {
            let active = try await serverOptions.readingEngine().isRecoveryKitActive()
            Terminal.output(JSONWriter.write(.object([("recoveryKit", .bool(active))])))
        }
    }
}
