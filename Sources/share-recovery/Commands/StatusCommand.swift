import ArgumentParser
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// `status`: where this device's wallet stands.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Where this device's wallet stands: generation, a cut-off operation, active methods.",
        discussion: helpText(
            "Reads the device's store (--store, unlocked with --passcode-file) and asks the server which recovery methods have a stored cipherText (a token of any purpose). Changes nothing. Prints one JSON object: current (the current share's public description, or null), staged (a staged share, or null), pendingSession ({\"sessionId\", \"purpose\"} of a backup or recovery that was cut off, or null; `store resume` or the next operation settles it), methods (the active recovery methods) and recoveryActivated.",
            examples: [
                "share-recovery status --store device --passcode-file passcode.txt --server http://127.0.0.1:8080 --user-id user-1 --token-file recover.token"
            ]))
    @OptionGroup var location: StoreCommand.Location
    @Option(help: "The passcode file.") var passcodeFile: String
    @OptionGroup var serverOptions: ServerOptions

    func run() async throws {
        let status = try await serverOptions.deviceEngine(location: location, passcodeFile: passcodeFile).deviceStatus()
        let methods = status.activeMethods ?? []
        Terminal.output(
            JSONWriter.write(
                .object([
                    ("current", status.current.map { $0.jsonValue(includingSecret: false) } ?? .null),
                    ("staged", status.staged.map { $0.jsonValue(includingSecret: false) } ?? .null),
                    ("pendingSession", status.pendingSession.map(Self.json) ?? .null),
                    ("methods", .array(methods.map { .string($0.name) })),
                    ("recoveryActivated", .bool(!methods.isEmpty)),
                ])))
    }

    /// `{"sessionId", "purpose"}`.
    static func json(_ session: PendingSession) -> JSONValue {
        .object([
            ("sessionId", .string(session.sessionId)),
            ("purpose", .string(session.purpose.name)),
        ])
    }
}
