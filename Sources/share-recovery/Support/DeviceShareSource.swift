import ShareRecovery

/// The device's share for a command that works with a reference server's custodian (`sign --server`,
/// `eject --server`): one `--signing-share` file, or the current share of its store.
enum DeviceShareSource {
    /// Checks how `--server`, `--user-id`, `--token-file`, `--store`, `--passcode-file` and
    /// `--signing-share` combine.
    /// - Parameter purpose: The token purpose the command needs, for the message.
    /// - Throws: A usage error naming what to give.
    static func checkUsage(
        server: String?, userId: String?, tokenFile: String?, store: String?, passcodeFile: String?, signingShares: Int,
        purpose: String
    ) throws {
        if server == nil, userId != nil || tokenFile != nil || store != nil {
            throw CLIError.usage("--user-id, --token-file and --store go with --server")
        }
        if (store == nil) != (passcodeFile == nil) { throw CLIError.usage("--store and --passcode-file go together") }
        if server != nil, userId == nil || tokenFile == nil || signingShares + (store == nil ? 0 : 1) != 1 {
            throw CLIError.usage(
                "with --server give --user-id, --token-file (purpose \(purpose)) and this device's share: one --signing-share, or --store and --passcode-file"
            )
        }
    }

    /// The current share of a store, unlocked with its passcode file.
    static func current(store: String, passcodeFile: String) async throws -> ShareRecord {
        try await opened(store: store, passcodeFile: passcodeFile).share
    }

    /// A store unlocked with its passcode file (held until released), and its current share.
    static func opened(store: String, passcodeFile: String) async throws -> (
        store: FileSigningShareStore, share: ShareRecord
    ) {
        let device = try FileSigningShareStore(directory: store)
        try await device.authenticate(try Files.readSecretLine(passcodeFile))
        guard let current = try await device.currentShare() else {
            throw ShareRecoveryError(.notFound, "the store \(store) holds no signing share")
        }
        return (device, current)
    }
}
