/// Where a device stands (``RecoveryEngine/deviceStatus()``): what a wallet app shows before it
/// offers a backup or a recovery. Public descriptions only; no secret.
public struct DeviceStatus: Sendable, Equatable {
    /// The current signing share's public description, or `nil` when the device holds none.
    public let current: ShareRecord?
    /// A staged share (a recovery cut off after staging; settled at the next operation), public.
    public let staged: ShareRecord?
    /// The session of a backup or recovery that was cut off, or `nil`.
    public let pendingSession: PendingSession?
    /// The methods with a stored cipherText, or `nil` when no cipherText store is configured.
    public let activeMethods: [BackupMethod]?

    /// Whether any recovery method is set up (`nil` when that is unknown).
    public var isRecoveryActivated: Bool? { activeMethods.map { !$0.isEmpty } }

    /// Creates a status.
    public init(
        current: ShareRecord?, staged: ShareRecord?, pendingSession: PendingSession?, activeMethods: [BackupMethod]?
    ) {
        self.current = current?.publicDescription
        self.staged = staged?.publicDescription
        self.pendingSession = pendingSession
        self.activeMethods = activeMethods
    }
}

extension RecoveryEngine {
    /// The device's state: its current and staged generations, a cut-off operation on record, and
    /// the active recovery methods (asked of the cipherText store). Changes nothing.
    /// - Throws: the store's errors (e.g. `notAuthenticated`); the cipherText store's.
    public func deviceStatus() async throws -> DeviceStatus {
        let store = configuration.shareStore
        let methods: [BackupMethod]? =
            if let cipherTexts = configuration.cipherTextStore {
                try await cipherTexts.storedMethods(userId: configuration.userId)
            } else {
                nil
            }
        return DeviceStatus(
            current: try await store.currentShare(), staged: try await store.stagedShare(),
            pendingSession: try await store.pendingSession(), activeMethods: methods)
    }
}
