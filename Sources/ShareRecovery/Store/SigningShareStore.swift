/// Where a device keeps its signing share, generation by generation.
///
/// A new generation is first *staged* beside the current one; it becomes current only after the
/// custodian confirms the new set (``promoteStaged()``), so a crash at any moment leaves exactly
/// the old or exactly the new generation current, never neither. Implementations must make every
/// step atomic and durable before returning.
public protocol SigningShareStore: Sendable {
    /// The current signing share, or `nil` when none is stored.
    /// - Throws: ``ShareRecoveryError`` (`storageFailure`, or a locked/unauthenticated store).
    func currentShare() async throws -> ShareRecord?

    /// The staged (not yet confirmed) generation, if a recovery was interrupted after staging.
    func stagedShare() async throws -> ShareRecord?

    /// Durably stages a new generation; the current one stays current.
    /// - Parameter share: The new signing share, with its secret.
    func stage(_ share: ShareRecord) async throws

    /// Makes the staged generation current and drops the previous one, atomically.
    func promoteStaged() async throws

    /// Drops the staged generation, keeping the current one.
    func discardStaged() async throws

    /// The custodian session of an operation that has not ended, if one was cut off (``PendingSession``).
    func pendingSession() async throws -> PendingSession?

    /// Durably records the session of an operation before the custodian is asked to finish it.
    func recordPendingSession(_ session: PendingSession) async throws

    /// Forgets the recorded session once it is settled. Nothing recorded is not an error.
    func clearPendingSession() async throws
}

/// A store in memory: tests, demos, and integrators who persist elsewhere.
public actor InMemorySigningShareStore: SigningShareStore {
    private var current: ShareRecord?
    private var staged: ShareRecord?
    private var pending: PendingSession?

    /// Creates a store, optionally with a current share.
    public init(current: ShareRecord? = nil) {
        self.current = current
    }

    public func currentShare() -> ShareRecord? { current }
    public func stagedShare() -> ShareRecord? { staged }

    public func stage(_ share: ShareRecord) throws(ShareRecoveryError) {
        guard share.secret != nil, share.kind == .signing else {
            throw ShareRecoveryError(.invalidParameters, "only a signing share with its secret can be stored")
        }
        staged = share
    }

    public func promoteStaged() throws(ShareRecoveryError) {
        guard let staged else { throw ShareRecoveryError(.storageFailure, "nothing is staged") }
        current = staged
        self.staged = nil
    }

    public func discardStaged() { staged = nil }

    public func pendingSession() -> PendingSession? { pending }

    public func recordPendingSession(_ session: PendingSession) { pending = session }

    public func clearPendingSession() { pending = nil }
}
