#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import ShareCrypto

/// A ``SigningShareStore`` in a directory: crash-safe, and encrypted at rest under a passcode.
///
/// A random 32-byte data key encrypts every share file (XChaCha20-Poly1305); the data key itself is
/// kept wrapped under a key derived from the passcode with Argon2id, so changing the passcode only
/// rewraps the data key. Every write is a temporary file, `fsync`, `rename`, directory `fsync`, and
/// promotion is one `rename` of `staged.share` over `current.share`: a store opened after a crash
/// at any point shows exactly the old or exactly the new current generation. The layout, the
/// crash-safety argument and the passcode rules are in docs/share-store.md.
///
/// Passcode attempts follow ``PasscodeAttemptPolicy``; the counter lives in the header on disk and
/// is incremented *before* a passcode is checked, so killing the process never refunds an attempt.
///
/// One object owns the directory at a time (an exclusive `flock`, held until the object is
/// released, and dropped by the kernel if its process dies); opening a second store on the same
/// directory, in this process or another, fails with `operationInProgress`.
///
/// Security considerations: the attempt limit protects against guessing through this API. Someone
/// who copies the directory can guess offline, limited only by Argon2id; someone who can write to
/// it can roll files back. Keep the directory in app-private storage.
public actor FileSigningShareStore: SigningShareStore {
    /// The store directory.
    public nonisolated let directory: String

    private let files: StoreDirectory
    private let argon2: Argon2idParameters
    private let clock: any PasscodeClock
    private let random: any RandomSource
    private let lockDescriptor: Int32

    /// The header as last read or written; `nil` while no passcode is set.
    private var header: StoreHeader?
    /// Why the header on disk cannot be used, if it cannot.
    private var headerProblem: ShareRecoveryError?
    /// The data key, held only between a successful authentication and ``lock()``.
    private var dataKey: SecureBytes?

    /// Opens (creating if needed) the store in `directory`, removes temporary files left by a
    /// crash, and finishes an interrupted ``remove()``. The store starts unauthenticated.
    /// - Parameters:
    ///   - directory: The store directory; created with mode 0700 if missing (its parent must exist).
    ///   - argon2: Argon2id parameters for passcodes set from now on (an existing passcode keeps
    ///     the parameters in the header). Tests may pass `Argon2idParameters.minimum`.
    ///   - clock: The wall clock for the attempt delays.
    ///   - random: The source of data keys, salts and nonces.
    /// - Throws: ``ShareRecoveryError/Code/operationInProgress`` when another store object (in any
    ///   process) holds the directory; ``ShareRecoveryError/Code/storageFailure`` when it cannot be
    ///   created, read or locked. A damaged header does not throw here: the
    ///   store opens so that it can be removed, and passcode operations report `storeCorrupted`.
    public init(
        directory: String, argon2: Argon2idParameters = .default, clock: any PasscodeClock = SystemPasscodeClock(),
        random: any RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) {
        try self.init(directory: directory, argon2: argon2, clock: clock, random: random, faultHook: nil)
    }

    /// Opens a store whose mutating file-system calls go through `faultHook` (tests).
    package init(
        directory: String, argon2: Argon2idParameters = .default, clock: any PasscodeClock = SystemPasscodeClock(),
        random: any RandomSource = SystemRandom(), faultHook: StoreFaultHook?
    ) throws(ShareRecoveryError) {
        let files = StoreDirectory(path: directory, faultHook: faultHook)
        try files.createIfMissing()
        let lock = try files.lockExclusively(StoreLayout.lockName)
        var header: StoreHeader?
        var problem: ShareRecoveryError?
        do throws(ShareRecoveryError) {
            try files.removeTemporaryFiles()
            do throws(ShareRecoveryError) {
                if let bytes = try files.read(StoreLayout.headerName, maximumCount: StoreHeader.encodedCount) {
                    header = try StoreHeader(decoding: bytes)
                } else {
                    // No header means no store: share files without one are what an interrupted remove() left.
                    try files.remove(StoreLayout.stagedName)
                    try files.remove(StoreLayout.currentName)
                    try files.remove(StoreLayout.pendingSessionName)
                    try files.remove(StoreLayout.pairSetupName)
                }
            } catch  where error.code == .storeCorrupted || error.code == .unsupportedVersion {
                problem = error
            }
        } catch {
            close(lock)
            throw error
        }
        self.directory = directory
        self.files = files
        self.argon2 = argon2
        self.clock = clock
        self.random = random
        self.lockDescriptor = lock
        self.header = header
        self.headerProblem = problem
    }

    deinit {
        close(lockDescriptor)
    }

    // MARK: Passcode state

    /// Whether a passcode has been set (a damaged header counts: it can only be removed).
    public var isPasscodeSet: Bool { header != nil || headerProblem != nil }

    /// The kind of the current passcode, so an app can show the right keypad; `nil` without one.
    public var passcodeKind: PasscodeKind? { header?.kind }

    /// Whether share access is open (a passcode was accepted and ``lock()`` not called since).
    public var isAuthenticated: Bool { dataKey != nil }

    /// Consecutive wrong passcodes (including an attempt cut short by a crash).
    public var failedAttempts: Int { header?.failedAttempts ?? 0 }

    /// Wrong passcodes left before the store locks out.
    public var remainingAttempts: Int { max(0, PasscodeAttemptPolicy.maximumFailures - failedAttempts) }

    /// Whether too many wrong passcodes have locked the store out; only ``remove()`` is left.
    public var isLockedOut: Bool { failedAttempts >= PasscodeAttemptPolicy.maximumFailures }

    /// How long until the next passcode attempt is accepted (zero if now).
    public func delayBeforeNextAttempt() -> Duration {
        guard let header else { return .zero }
        return .milliseconds(remainingDelayMilliseconds(header))
    }

    // MARK: Passcode operations

    /// Sets the first passcode: makes a random data key and wraps it under the passcode. The store
    /// is then authenticated.
    /// - Parameters:
    ///   - passcode: The passcode's UTF-8 bytes (rules: ``PasscodeKind``).
    ///   - confirmation: The passcode entered a second time.
    /// - Throws: ``ShareRecoveryError`` with `passcodeAlreadySet`, `invalidPasscode`,
    ///   `passcodeMismatch`, `storeCorrupted` (remove the store first) or `storageFailure` (no
    ///   passcode is set then).
    public func createPasscode(_ passcode: SecureBytes, confirmation: SecureBytes) throws(ShareRecoveryError) {
        if let headerProblem { throw headerProblem }
        guard header == nil else {
            throw ShareRecoveryError(.passcodeAlreadySet, "a passcode is already set; change it instead")
        }
        let kind = try PasscodeKind(validating: passcode)
        guard passcode == confirmation else {
            throw ShareRecoveryError(.passcodeMismatch, "the passcode and its confirmation differ")
        }
        let key = random.secureBytes(count: XChaCha20Poly1305.keyCount)
        try save(try StoreHeader(wrapping: key, passcode: passcode, kind: kind, parameters: argon2, random: random))
        dataKey = key
    }

    /// Checks a passcode and, if it is right, opens share access.
    ///
    /// Every well-formed attempt is counted on disk before it is checked; a right passcode resets
    /// the count. A wrong one also closes share access.
    /// - Parameter passcode: The passcode's UTF-8 bytes.
    /// - Throws: ``ShareRecoveryError`` with `wrongPasscode` (the reason says how many attempts
    ///   remain), `attemptTooSoon` (not checked, not counted; see ``delayBeforeNextAttempt()``),
    ///   `lockedOut`, `passcodeNotSet`, `invalidPasscode` (cannot be the passcode; not counted),
    ///   `storeCorrupted` or `storageFailure`.
    public func authenticate(_ passcode: SecureBytes) throws(ShareRecoveryError) {
        var (key, header): (SecureBytes, StoreHeader)
        do throws(ShareRecoveryError) {
            (key, header) = try verify(passcode)
        } catch {
            if error.code == .wrongPasscode || error.code == .lockedOut { dataKey = nil }
            throw error
        }
        header.failedAttempts = 0
        header.lastAttemptMilliseconds = 0
        try save(header)
        dataKey = key
    }

    /// Replaces the passcode, possibly with one of another kind (4 digits → alphanumeric). Only the
    /// data key is rewrapped (under the store's current Argon2id parameters); share files are not
    /// touched. The store is authenticated afterwards.
    /// - Parameters:
    ///   - old: The current passcode; checked and counted like ``authenticate(_:)``.
    ///   - new: The new passcode (rules: ``PasscodeKind``).
    ///   - confirmation: The new passcode entered a second time.
    /// - Throws: ``ShareRecoveryError`` with `invalidPasscode` or `passcodeMismatch` for the new
    ///   passcode (checked first, costing no attempt), then the errors of ``authenticate(_:)``. On
    ///   any error the old passcode stays valid.
    public func changePasscode(old: SecureBytes, new: SecureBytes, confirmation: SecureBytes) throws(ShareRecoveryError)
    {
        if let headerProblem { throw headerProblem }
        guard header != nil else { throw ShareRecoveryError(.passcodeNotSet, "no passcode is set") }
        let kind = try PasscodeKind(validating: new)
        guard new == confirmation else {
            throw ShareRecoveryError(.passcodeMismatch, "the new passcode and its confirmation differ")
        }
        let (key, _) = try verify(old)
        // The new header starts with a zero attempt count, so it also resets the counter.
        try save(try StoreHeader(wrapping: key, passcode: new, kind: kind, parameters: argon2, random: random))
        dataKey = key
    }

    /// Closes share access until the next successful ``authenticate(_:)``; the data key is wiped.
    public func lock() {
        dataKey = nil
    }

    /// Wipes the store: the header first (without the wrapped data key the share files cannot be
    /// decrypted), then the share files. Allowed without a passcode and when locked out, since it
    /// destroys rather than reveals. Afterwards no passcode is set; the directory and its lock file remain.
    /// - Throws: ``ShareRecoveryError/Code/storageFailure``; once the header is gone, a later open
    ///   finishes the removal.
    public func remove() throws(ShareRecoveryError) {
        try files.remove(StoreLayout.headerName)
        header = nil
        headerProblem = nil
        dataKey = nil
        try files.remove(StoreLayout.stagedName)
        try files.remove(StoreLayout.currentName)
        try files.remove(StoreLayout.pendingSessionName)
        try files.remove(StoreLayout.pairSetupName)
    }

    // MARK: SigningShareStore

    /// The current signing share, fully validated, or `nil` when none is stored.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut`, `storeCorrupted` or `storageFailure`.
    public func currentShare() throws(ShareRecoveryError) -> ShareRecord? {
        try readShare(StoreLayout.currentName, dataKey: try requireDataKey())
    }

    /// The staged generation, fully validated, or `nil` when nothing is staged.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut`, `storeCorrupted` or `storageFailure`.
    public func stagedShare() throws(ShareRecoveryError) -> ShareRecord? {
        try readShare(StoreLayout.stagedName, dataKey: try requireDataKey())
    }

    /// Durably stages a new generation, replacing any staged one; the current one stays current.
    /// - Parameter share: A signing share with its secret, of a generation newer than the current one.
    /// - Throws: ``ShareRecoveryError`` with `invalidParameters` for a backup share, a public
    ///   description, or a generation not newer than the current share's (a replayed older set),
    ///   `notAuthenticated`, `lockedOut`, or `storageFailure` (the previously staged file, if any, is
    ///   then intact).
    public func stage(_ share: ShareRecord) throws(ShareRecoveryError) {
        let key = try requireDataKey()
        guard share.secret != nil, share.kind == .signing else {
            throw ShareRecoveryError(.invalidParameters, "only a signing share with its secret can be stored")
        }
        // Generations only move forward: a replayed older set must not become current again. An
        // unreadable current file does not block staging, since a recovery is how a device gets past it.
        if case .success(let current?) = Result(catching: { () throws(ShareRecoveryError) in
            try readShare(StoreLayout.currentName, dataKey: key)
        }), share.generation <= current.generation {
            throw ShareRecoveryError(
                .invalidParameters,
                "generation \(share.generation) is not newer than the current generation \(current.generation)")
        }
        try files.writeAtomically(StoreLayout.stagedName, try ShareFile.seal(share, dataKey: key, random: random))
    }

    /// Makes the staged generation current in one atomic `rename`, dropping the previous one. The
    /// staged file is validated first, so a damaged one is never promoted.
    /// - Throws: ``ShareRecoveryError`` with `storageFailure` when nothing is staged or the rename
    ///   fails (the old generation is then current), `storeCorrupted`, `notAuthenticated` or
    ///   `lockedOut`. A failure of the directory `fsync` after the rename is also `storageFailure`;
    ///   the new generation is then current but its durability is unknown.
    public func promoteStaged() throws(ShareRecoveryError) {
        let key = try requireDataKey()
        guard try readShare(StoreLayout.stagedName, dataKey: key) != nil else {
            throw ShareRecoveryError(.storageFailure, "nothing is staged")
        }
        try files.rename(StoreLayout.stagedName, over: StoreLayout.currentName)
    }

    /// Drops the staged generation, keeping the current one. Nothing staged is not an error.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func discardStaged() throws(ShareRecoveryError) {
        _ = try requireDataKey()
        try files.remove(StoreLayout.stagedName)
    }

    /// The recorded session of an operation cut off before it ended, or `nil`.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut`, `storeCorrupted` or `storageFailure`.
    public func pendingSession() throws(ShareRecoveryError) -> PendingSession? {
        _ = try requireDataKey()
        return try files.read(StoreLayout.pendingSessionName, maximumCount: 512).map {
            bytes throws(ShareRecoveryError) in
            try PendingSession(encoded: bytes)
        }
    }

    /// Durably records an operation's session (temporary file, `fsync`, `rename`, directory `fsync`).
    /// - Throws: ``ShareRecoveryError`` with `invalidParameters` for an id that cannot be recorded,
    ///   `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func recordPendingSession(_ session: PendingSession) throws(ShareRecoveryError) {
        _ = try requireDataKey()
        guard PendingSession.isRecordable(session.sessionId) else {
            throw ShareRecoveryError(.invalidParameters, "a session id must be 1…255 visible ASCII bytes")
        }
        try files.writeAtomically(StoreLayout.pendingSessionName, session.encoded)
    }

    /// Forgets the recorded session. Nothing recorded is not an error.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func clearPendingSession() throws(ShareRecoveryError) {
        _ = try requireDataKey()
        try files.remove(StoreLayout.pendingSessionName)
    }

    // MARK: ECDSA pair setup

    /// The kept ECDSA pair setup (``KeptPairSetup``), or `nil`. One kept before a promotion stays
    /// until replaced, but it was sealed for the old share and opens with no later one.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func keptPairSetup() throws(ShareRecoveryError) -> [UInt8]? {
        _ = try requireDataKey()
        return try files.read(StoreLayout.pairSetupName, maximumCount: KeptPairSetup.maximumCount)
    }

    /// Durably keeps a sealed pair setup (``KeptPairSetup/seal(_:share:random:)``), replacing any other.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func keepPairSetup(_ sealed: [UInt8]) throws(ShareRecoveryError) {
        _ = try requireDataKey()
        try files.writeAtomically(StoreLayout.pairSetupName, sealed)
    }

    /// Deletes the kept pair setup (after an abort discarded it). Nothing kept is not an error.
    /// - Throws: ``ShareRecoveryError`` with `notAuthenticated`, `lockedOut` or `storageFailure`.
    public func forgetPairSetup() throws(ShareRecoveryError) {
        _ = try requireDataKey()
        try files.remove(StoreLayout.pairSetupName)
    }

    // MARK: Internals

    private func requireDataKey() throws(ShareRecoveryError) -> SecureBytes {
        if let headerProblem { throw headerProblem }
        guard let header else { throw ShareRecoveryError(.notAuthenticated, "no passcode is set") }
        guard header.failedAttempts < PasscodeAttemptPolicy.maximumFailures else { throw Self.lockedOutError() }
        guard let dataKey else { throw ShareRecoveryError(.notAuthenticated, "authenticate with the passcode first") }
        return dataKey
    }

    private func readShare(_ name: String, dataKey: SecureBytes) throws(ShareRecoveryError) -> ShareRecord? {
        guard let bytes = try files.read(name, maximumCount: StoreLayout.maximumShareFileCount) else { return nil }
        return try ShareFile.open(bytes, dataKey: dataKey, name: name)
    }

    /// Checks a passcode under the attempt policy, counting the attempt durably before the check.
    /// - Returns: The data key and the header with the attempt counted.
    private func verify(_ passcode: SecureBytes) throws(ShareRecoveryError) -> (SecureBytes, StoreHeader) {
        if let headerProblem { throw headerProblem }
        guard var header else { throw ShareRecoveryError(.passcodeNotSet, "no passcode is set") }
        guard header.failedAttempts < PasscodeAttemptPolicy.maximumFailures else { throw Self.lockedOutError() }
        let wait = remainingDelayMilliseconds(header)
        guard wait == 0 else {
            throw ShareRecoveryError(.attemptTooSoon, "wait \((wait + 999) / 1000) s before the next passcode attempt")
        }
        _ = try PasscodeKind(validating: passcode)
        // Counted before the check: a process killed while Argon2id runs has still spent the attempt.
        header.failedAttempts += 1
        header.lastAttemptMilliseconds = clock.millisecondsSince1970()
        try save(header)
        guard let key = try header.unwrap(with: passcode) else {
            let failures = header.failedAttempts
            guard failures < PasscodeAttemptPolicy.maximumFailures else {
                dataKey = nil
                throw ShareRecoveryError(
                    .lockedOut, "wrong passcode; too many wrong passcodes, the store is locked out")
            }
            var reason = "wrong passcode; \(PasscodeAttemptPolicy.maximumFailures - failures) attempts remaining"
            let delay = PasscodeAttemptPolicy.delay(afterFailures: failures)
            if delay > .zero { reason += ", the next one after \(delay.components.seconds) s" }
            throw ShareRecoveryError(.wrongPasscode, reason)
        }
        return (key, header)
    }

    /// Milliseconds left before the policy accepts another attempt. A clock that went back before
    /// the last attempt does not shorten the wait: it counts from the last attempt's time.
    private func remainingDelayMilliseconds(_ header: StoreHeader) -> Int64 {
        let (required, _) = PasscodeAttemptPolicy.delay(afterFailures: header.failedAttempts).components
        guard required > 0 else { return 0 }
        let elapsed = max(0, clock.millisecondsSince1970() - header.lastAttemptMilliseconds)
        return max(0, required * 1000 - elapsed)
    }

    private func save(_ newHeader: StoreHeader) throws(ShareRecoveryError) {
        try files.writeAtomically(StoreLayout.headerName, newHeader.encoded())
        header = newHeader
    }

    private static func lockedOutError() -> ShareRecoveryError {
        ShareRecoveryError(.lockedOut, "too many wrong passcodes: the store is locked out and can only be removed")
    }
}
