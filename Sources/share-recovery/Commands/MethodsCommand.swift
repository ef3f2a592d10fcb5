import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// Where the reference server is and who the user is.
struct ServerOptions: ParsableArguments {
    @Option(help: "The reference server's base URL (e.g. http://127.0.0.1:8080).") var server: String
    @Option(help: "The user id (also the custodian's client id).") var userId: String
    @Option(help: "A file with a token for this operation (from `otp verify`).") var tokenFile: String

    /// The token file's token, for every purpose (``TokenFile``).
    func tokens() throws -> TokenProvider { try TokenFile.provider(tokenFile) }

    /// An engine for changes from this device: its unlocked store, and the webhook secret that
    /// delivers custodian backup shares.
    func deviceEngine(store: String, passcodeFile: String, webhookSecretFile: String, argon2: Argon2idParameters)
        async throws -> RecoveryEngine
    {
        let device = try FileSigningShareStore(directory: store)
        try await device.authenticate(try Files.readSecretLine(passcodeFile))
        return RecoveryEngine(
            configuration: ReferenceServerClient(base: server).engineConfiguration(
                userId: userId, store: device, tokens: try tokens(),
                webhookSecret: try Files.readWebhookSecret(webhookSecretFile),
                argon2: argon2))
    }

    /// An engine for reads only (listing): no device store, no webhook secret.
    func readingEngine() throws -> RecoveryEngine {
        RecoveryEngine(
            configuration: ReferenceServerClient(base: server).engineConfiguration(
                userId: userId, store: InMemorySigningShareStore(), tokens: try tokens(), webhookSecret: nil))
    }
}

/// `methods …`: the recovery-method lifecycle against a reference server.
struct MethodsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "methods", abstract: "List, add (or rotate) and delete recovery methods on a reference server.",
        discussion: helpText(
            "Each change needs a token of its own purpose, from an OTP flow (`otp start`, then `otp verify`): addOrUpdateRecovery to add or rotate, deleteRecovery to delete; listing takes a token of any purpose. Tokens are read from files (--token-file).",
            examples: [
                "share-recovery methods list --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token",
                "share-recovery help methods add",
            ]),
        subcommands: [List.self, Add.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The activated recovery methods (a token of any purpose).",
            discussion: helpText(
                "Prints a JSON array of method names.",
                examples: [
                    "share-recovery methods list --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token"
                ]))
        @OptionGroup var serverOptions: ServerOptions

        func run() async throws {
            let methods = try await serverOptions.readingEngine().activatedRecoveryMethods()
            Terminal.output(JSONWriter.write(.array(methods.map { .string($0.name) })))
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add a method, or rotate it: a new backup set, and the old cipherText stops working (addOrUpdateRecovery token).",
            discussion: helpText(
                "Reshares the device's signing share (from --store, unlocked with --passcode-file) with the server's custodian into a new backup set, stores the cipherText with the integrator and delivers the custodian backup share through the webhook (--webhook-secret-file). Adding a method that exists rotates it: its old cipherText stops working. --secret-file is read as for `backup`.",
                examples: [
                    "share-recovery methods add --server http://127.0.0.1:8080 --user-id user-1 --token-file add.token --webhook-secret-file share-recovery.sqlite.webhook-secret --store device --passcode-file passcode.txt --method password --secret-file password.txt"
                ]))
        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "The integrator's webhook secret file (delivers the custodian backup share).")
        var webhookSecretFile: String
        @Option(help: "The device's signing share store directory.") var store: String
        @Option(help: "The store's passcode file.") var passcodeFile: String
        @Option(help: "The backup method.") var method: BackupMethod
        @Option(help: "The secret: UTF-8 text (password, recoveryCode) or 32 raw bytes / 64 hex digits.")
        var secretFile: String
        @OptionGroup var kdf: KDFOptions

        func run() async throws {
            let engine = try await serverOptions.deviceEngine(
                store: store, passcodeFile: passcodeFile, webhookSecretFile: webhookSecretFile,
                argon2: try kdf.parameters())
            let cipherText = try await engine.addOrUpdateRecoveryMethod(
                method, secret: try Files.readSecret(secretFile, method: method), keyId: kdf.keyId)
            Terminal.output(
                JSONWriter.write(
                    .object([("method", .string(method.name)), ("cipherText", .string(cipherText.base64))])))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Delete a method's cipherText and custodian backup share (deleteRecovery token); never the last one without --force.",
            discussion: helpText(
                "Needs a deleteRecovery token. Deleting the last method would leave no way to recover, so it is refused unless --force is given.",
                examples: [
                    "share-recovery methods delete --server http://127.0.0.1:8080 --user-id user-1 --token-file delete.token --webhook-secret-file share-recovery.sqlite.webhook-secret --method cloudKey"
                ]))
        @OptionGroup var serverOptions: ServerOptions
        @Option(help: "The integrator's webhook secret file (deletes the custodian backup share).")
        var webhookSecretFile: String
        @Option(help: "The backup method.") var method: BackupMethod
        @Flag(help: "Delete even the last method, leaving no way to recover.") var force = false

        func run() async throws {
            let configuration = ReferenceServerClient(base: serverOptions.server).engineConfiguration(
                userId: serverOptions.userId, store: InMemorySigningShareStore(), tokens: try serverOptions.tokens(),
                webhookSecret: try Files.readWebhookSecret(webhookSecretFile))
            let engine = RecoveryEngine(configuration: configuration)
            try await engine.deleteRecoveryMethod(method, force: force)
            Terminal.output(JSONWriter.write(.object([("deleted", .string(method.name))])))
        }
    }
}

/// `otp …`: the server's OTP flows, which issue the purpose-bound tokens.
struct OTPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "otp", abstract: "Start an OTP flow and verify its code to get a purpose-bound token.",
        discussion: helpText(
            "Purpose-bound tokens come from one-time codes: `otp start` asks the server to send a code for a purpose (recover, addOrUpdateRecovery, deleteRecovery, sign for `wallet create` and `sign --server`, eject for `eject --server`, addDevice for `device add approve` and `device add join`, or removeDevice for `device remove`) and prints a flow id; `otp verify` exchanges the code for a token written to a 0600 file. The reference server on its defaults appends codes to share-recovery-otp.jsonl.",
            examples: [
                "share-recovery otp start --server http://127.0.0.1:8080 --identifier user-1 --purpose addOrUpdateRecovery",
                "share-recovery otp verify --server http://127.0.0.1:8080 --flow-id FLOW_ID --code-file code.txt --token-out add.token",
            ]),
        subcommands: [Start.self, Verify.self])

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a flow; the server sends the code out of band.",
            discussion: helpText(
                "Prints {\"flowId\": …}. The code goes out of band (the reference server's default: a line in share-recovery-otp.jsonl).",
                examples: [
                    "share-recovery otp start --server http://127.0.0.1:8080 --identifier user-1 --purpose recover"
                ]))
        @Option(help: "The reference server's base URL.") var server: String
        @Option(help: "The user id the code is sent for.") var identifier: String
        @Option(help: ArgumentHelp("The token's purpose: \(Start.purposes).", valueName: "purpose")) var purpose: String

        /// Every purpose, from the one list (`TokenPurpose`), so a new one appears here without an edit.
        static let purposes: String = {
            let names = TokenPurpose.allCases.map(\.rawValue)
            return names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
        }()

        func run() async throws {
            guard TokenPurpose(rawValue: purpose) != nil else {
                throw CLIError.usage("--purpose must be \(Self.purposes)")
            }
            let flowId = try await ReferenceServerClient(base: server).startFlow(
                identifier: identifier, purpose: purpose)
            Terminal.output(JSONWriter.write(.object([("flowId", .string(flowId))])))
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a code; the token goes to a 0600 file, never to output.",
            discussion: helpText(
                "--code-file holds the one-time code. Too many wrong codes end the flow; start a new one.",
                examples: [
                    "share-recovery otp verify --server http://127.0.0.1:8080 --flow-id FLOW_ID --code-file code.txt --token-out recover.token"
                ]))
        @Option(help: "The reference server's base URL.") var server: String
        @Option(help: "The flow id from `otp start`.") var flowId: String
        @Option(help: "A file with the one-time code.") var codeFile: String
        @Option(help: "Where to write the token (mode 0600).") var tokenOut: String

        func run() async throws {
            let token = try await ReferenceServerClient(base: server).verifyFlow(
                flowId: flowId, code: try Files.readSecretLine(codeFile))
            try Files.write(String(decoding: token.revealedBytes(), as: UTF8.self) + "\n", to: tokenOut, secret: true)
            Terminal.output(JSONWriter.write(.object([("tokenFile", .string(tokenOut))])))
        }
    }
}
