import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `store …`: the device's passcode-protected signing share store.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "The passcode-protected signing share store.",
        discussion: helpText(
            "The device's share store: one directory with the current signing share (and a staged one during a recovery), encrypted under a key derived from the passcode. Writes are crash-safe: after a crash the store holds the old or the new share, never a mix. Passcodes are read from files (one trailing newline ignored).",
            examples: [
                "share-recovery store init --store device --passcode-file passcode.txt --confirm-file passcode.txt --share wallet/share-1.json",
                "share-recovery store status --store device",
            ]),
        subcommands: [Init.self, Status.self, Show.self, Recover.self, Resume.self, ChangePasscode.self, Remove.self])

    struct Location: ParsableArguments {
        @Option(help: "The store directory.") var store: String
        @Option(help: "Argon2id opslimit for a new store's passcode key.") var kdfOps: UInt32 = Argon2idParameters
            .default.opslimit
        @Option(help: "Argon2id memlimit (KiB) for a new store's passcode key.") var kdfMemKib: UInt32 =
            Argon2idParameters.default.memlimitKiB

        func open() throws -> FileSigningShareStore {
            try FileSigningShareStore(
                directory: store, argon2: try KDFOptions.parameters(opslimit: kdfOps, memlimitKiB: kdfMemKib))
        }
    }

    /// A passcode file's bytes, one trailing newline ignored.
    static func passcode(_ path: String) throws -> SecureBytes { try Files.readSecretLine(path) }

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the store: set the passcode (entered twice) and store a signing share, if given.",
            discussion: helpText(
                "--confirm-file must hold the same passcode as --passcode-file (a typo check). --share is a signing share with its secret (e.g. from `keygen`, `recover` or `wallet create`); the ECDSA pair setup kept beside it (--share.pairsetup, from `wallet create` or `device add join`) moves into the store with it. Without --share the store starts empty, for a new device to `store recover` into.",
                examples: [
                    "share-recovery store init --store device --passcode-file passcode.txt --confirm-file passcode.txt --share wallet/share-1.json",
                    "share-recovery store init --store new-device --passcode-file passcode.txt --confirm-file passcode.txt",
                ]))
        @OptionGroup var location: Location
        @Option(help: "The passcode file.") var passcodeFile: String
        @Option(help: "The passcode again (must match).") var confirmFile: String
        @Option(help: "The signing share JSON file (with secret) to store; none for an empty store.") var share: String?

        func run() async throws {
            let store = try location.open()
            let record = try share.map(Files.readShare)
            try await store.createPasscode(try passcode(passcodeFile), confirmation: try passcode(confirmFile))
            guard let share, let record else {
                Terminal.output(JSONWriter.write(.object([("store", .string(store.directory)), ("share", .null)])))
                return
            }
            try await store.stage(record)
            try await store.promoteStaged()
            let beside = KeptSetupPlace.file(besideShare: share)
            if let setup = try await beside.load(for: record) {
                try await KeptSetupPlace.store(store).keep(setup, for: record)
                try await beside.forget()
            }
            Terminal.output(record.json())
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Passcode state and attempt counters (no passcode needed).",
            discussion: helpText(
                "Needs no passcode: shows whether one is set, its kind, and how many wrong attempts remain before the store locks.",
                examples: [
                    "share-recovery store status --store device"
                ]))
        @OptionGroup var location: Location

        func run() async throws {
            let store = try location.open()
            let kind = await store.passcodeKind.map { JSONValue.string($0.description) } ?? .null
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("passcodeSet", .bool(await store.isPasscodeSet)), ("passcodeKind", kind),
                        ("failedAttempts", .number(String(await store.failedAttempts))),
                        ("remainingAttempts", .number(String(await store.remainingAttempts))),
                        ("lockedOut", .bool(await store.isLockedOut)),
                    ])))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The current (and any staged) share's public description.",
            discussion: helpText(
                "Prints public descriptions only (no secret), after checking the passcode, and pendingSession: the custodian session of a backup or recovery that was cut off ({\"sessionId\", \"purpose\"}, or null). The next backup, recovery or method change settles it first (docs/recovery.md).",
                examples: [
                    "share-recovery store show --store device --passcode-file passcode.txt"
                ]))
        @OptionGroup var location: Location
        @Option(help: "The passcode file.") var passcodeFile: String

        func run() async throws {
            let store = try location.open()
            try await store.authenticate(try passcode(passcodeFile))
            let current = try await store.currentShare()
            let staged = try await store.stagedShare()
            let pending = try await store.pendingSession().map(StatusCommand.json)
            Terminal.output(
                JSONWriter.write(
                    .object([
                        ("current", current.map { $0.jsonValue(includingSecret: false) } ?? .null),
                        ("staged", staged.map { $0.jsonValue(includingSecret: false) } ?? .null),
                        ("pendingSession", pending ?? .null),
                    ])))
        }
    }

    struct ChangePasscode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the passcode (old, then new twice); its kind may change.",
            discussion: helpText(
                "The share is re-encrypted under the new passcode's key; --confirm-file must hold the new passcode again.",
                examples: [
                    "share-recovery store change-passcode --store device --old-file passcode.txt --new-file new-passcode.txt --confirm-file new-passcode.txt"
                ]))
        @OptionGroup var location: Location
        @Option(help: "The current passcode file.") var oldFile: String
        @Option(help: "The new passcode file.") var newFile: String
        @Option(help: "The new passcode again.") var confirmFile: String

        func run() async throws {
            let store = try location.open()
            try await store.changePasscode(
                old: try passcode(oldFile), new: try passcode(newFile), confirmation: try passcode(confirmFile))
            Terminal.output(#"{"changed":true}"#)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wipe the store: its shares and passcode.",
            discussion: helpText(
                "Deletes the store's shares and passcode. Without another backup this loses the device's share for good.",
                examples: [
                    "share-recovery store remove --store device"
                ]))
        @OptionGroup var location: Location

        func run() async throws {
            try await location.open().remove()
            Terminal.output(#"{"removed":true}"#)
        }
    }
}
