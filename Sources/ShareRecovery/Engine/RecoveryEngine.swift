public import ShareCrypto

/// The engine a wallet service links: backup, recovery with §8 statuses, and the recovery-method
/// lifecycle, for one user's device. It never rebuilds the wallet key: every change of shares is a
/// resharing with the custodian, checked against commitments before anything is stored.
public struct RecoveryEngine: Sendable {
    /// Everything the engine talks to.
    public struct Configuration: Sendable {
        /// The integrator's id for this user (also the custodian's client id).
        public var userId: String
        /// The custodian role (in process or over HTTP).
        public var custodian: any Custodian
        /// The device's signing share store.
        public var shareStore: any SigningShareStore
        /// Where cipherTexts are fetched from in managed mode (no cipherText given to ``RecoveryEngine/recover(method:cipherText:secret:progress:)``).
        public var cipherTextSource: (any CipherTextSource)?
        /// Where new cipherTexts are stored.
        public var cipherTextStore: (any CipherTextStore)?
        /// Where custodian backup shares are delivered.
        public var custodianBackupSink: (any CustodianBackupSink)?
        /// Argon2id parameters for new password and recovery-code backups.
        public var argon2: Argon2idParameters
        /// The random source (the system CSPRNG in production).
        public var random: any RandomSource

        /// Creates a configuration.
        public init(
            userId: String, custodian: any Custodian, shareStore: any SigningShareStore,
            cipherTextSource: (any CipherTextSource)? = nil, cipherTextStore: (any CipherTextStore)? = nil,
            custodianBackupSink: (any CustodianBackupSink)? = nil, argon2: Argon2idParameters = .default,
            random: any RandomSource = SystemRandom()
        ) {
            self.userId = userId
            self.custodian = custodian
            self.shareStore = shareStore
            self.cipherTextSource = cipherTextSource
            self.cipherTextStore = cipherTextStore
            self.custodianBackupSink = custodianBackupSink
            self.argon2 = argon2
            self.random = random
        }
    }

    /// The configuration.
    public let configuration: Configuration

    /// Creates an engine.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: Backup

    /// Backs up the device's signing share for one method: reshares the signing set into a new
    /// backup set with the custodian, encrypts the user backup share, hands the custodian backup
    /// share(s) to the sink and stores the cipherText. A previous backup of the same method is
    /// replaced, so its cipherText stops working.
    /// - Parameters:
    ///   - method: The backup method.
    ///   - secret: The password/recovery code or 32-byte key material.
    ///   - keyId: Which cloud key object or passkey credential.
    /// - Returns: The new cipherText.
    /// - Throws: ``ShareRecoveryError`` (`operationInProgress` when another backup, recovery or
    ///   method change of this wallet is running), or a source's or custodian's own error; nothing is
    ///   stored unless every step succeeded.
    @discardableResult
    public func backup(method: BackupMethod, secret: BackupSecret, keyId: String = "") async throws -> CipherText {
        guard method != .recoveryCode || keyId != CipherText.recoveryKitKeyId else {
            throw ShareRecoveryError(.invalidParameters, "keyId \(keyId) is reserved for recovery kits")
        }
        return try await backup(method: method, keyId: keyId) { _ in secret }.cipherText
    }

    /// The same backup, for a secret that depends on the new user backup share: a recovery kit's
    /// recovery code is the share's own scalar (RecoveryKit). `secret` runs after the custodian has
    /// finished the set and before anything is delivered or stored; if it throws, nothing is.
    /// - Returns: The new cipherText and the user backup share it encrypts.
    package func backup(
        method: BackupMethod, keyId: String, secret: (ShareRecord) throws -> BackupSecret
    ) async throws -> (cipherText: CipherText, userShare: ShareRecord) {
        try await operation("backup") {
            try await performResume()
            return try await performBackup(method: method, keyId: keyId, secret: secret)
        }
    }

    private func performBackup(
        method: BackupMethod, keyId: String, secret: (ShareRecord) throws -> BackupSecret
    ) async throws -> (cipherText: CipherText, userShare: ShareRecord) {
        guard let signing = try await configuration.shareStore.currentShare() else {
            throw ShareRecoveryError(.notFound, "no signing share is stored on this device")
        }
        let (sessionId, dealt) = try await reshareWithCustodian(
            .init(clientId: configuration.userId, purpose: .backup(method), clientShare: signing), ownShare: signing,
            newKind: .backup)
        let pending = PendingSession(sessionId: sessionId, purpose: .backup)
        let (result, newShare, cipherText) = try await abandoningOnFailure(pending) {
            let result = try await configuration.custodian.finishSession(
                id: sessionId, clientDealing: dealt.outgoingDealing)
            let newShare = try dealt.finish(result: result)
            let cipherText = try CipherText.encrypt(
                newShare, method: method, secret: try secret(newShare), argon2: configuration.argon2, keyId: keyId,
                using: configuration.random)
            return (result, newShare, cipherText)
        }
        // A failure from here on abandons the session too, so a retry is not refused as in progress
        // until the session expires. (The signing set is unchanged by a backup: nothing to undo.)
        try await abandoningOnFailure(pending) {
            // Custodian shares first: a cipherText is only useful once its custodian half is stored.
            if let sink = configuration.custodianBackupSink {
                for share in result.custodianBackupShares {
                    try await sink.deliverBackupShare(share, clientId: configuration.userId)
                }
            }
            try await configuration.cipherTextStore?.storeCipherText(
                cipherText.base64, userId: configuration.userId, method: method)
        }
        switch await confirmSettling(pending) {
        case .confirmed: try await configuration.shareStore.clearPendingSession()
        case .abandoned(let error), .unknown(let error): throw error
        }
        return (cipherText, newShare)
    }

    // MARK: Recovery

    /// Recovers a new signing share from a cipherText and the custodian's backup share.
    /// - Parameters:
    ///   - method: The backup method.
    ///   - cipherText: The cipherText text, or `nil`/empty to fetch it from the configured source.
    ///   - secret: The secret for the method.
    ///   - progress: Told every docs/formats.md §8 status as it begins; nothing after a failure.
    /// - Returns: The new signing share (stored and current when this returns).
    /// - Throws: ``ShareRecoveryError`` (`operationInProgress` when another backup, recovery or
    ///   method change of this wallet is running), or a source's or custodian's own error; on any
    ///   failure or cancellation nothing stored changes.
    @discardableResult
    public func recover(
        method: BackupMethod, cipherText: String? = nil, secret: BackupSecret,
        progress: @Sendable (RecoveryStatus) -> Void = { _ in }
    ) async throws -> ShareRecord {
        try await operation("recovery") {
            try await performResume()
            let userShare = try await openCipherText(
                method: method, cipherText: cipherText, secret: secret, progress: progress
            ).userShare
            return try await performRecovery(userShare: userShare, method: method, progress: progress)
        }
    }

    /// The second half of a recovery, from an already decrypted user backup share (a recovery kit
    /// gives one back, an offline recovery opens its cipherText with ``openCipherText(method:cipherText:secret:progress:)``):
    /// reports `recoveringSigningShare` through `done`.
    /// - Parameters:
    ///   - userShare: The user backup share, with its secret.
    ///   - method: The backup method of its set.
    ///   - progress: Told every status as it begins; nothing after a failure.
    /// - Returns: The new signing share (stored and current when this returns).
    /// - Throws: As ``recover(method:cipherText:secret:progress:)``.
    @discardableResult
    package func recover(
        userShare: ShareRecord, method: BackupMethod, progress: (RecoveryStatus) -> Void = { _ in }
    ) async throws -> ShareRecord {
        try await operation("recovery") {
            try await performResume()
            return try await performRecovery(userShare: userShare, method: method, progress: progress)
        }
    }

    /// The first half of a recovery: `readingShare` → `parsingShare`. Reads the cipherText (the one
    /// given, else the configured source's) and decrypts the user backup share.
    /// - Parameters:
    ///   - method: The backup method, or `nil` to take the cipherText's own (a cipherText must then be given).
    ///   - cipherText: The cipherText text, or `nil`/empty to fetch it from the configured source.
    ///   - secret: The secret for the method.
    ///   - progress: Told every status as it begins.
    /// - Returns: The envelope (its method) and the user backup share.
    /// - Throws: ``ShareRecoveryError`` (the cipherText and record codes; `invalidParameters` when
    ///   there is nothing to read), or the source's own error.
    package func openCipherText(
        method: BackupMethod?, cipherText: String?, secret: BackupSecret, progress: (RecoveryStatus) -> Void
    ) async throws -> (envelope: CipherText, userShare: ShareRecord) {
        progress(.readingShare)
        let text: String
        if let cipherText, !cipherText.isEmpty {
            text = cipherText
        } else {
            guard let source = configuration.cipherTextSource, let method else {
                throw ShareRecoveryError(.invalidParameters, "no cipherText given and no cipherText source configured")
            }
            text = try await source.fetchCipherText(userId: configuration.userId, method: method)
        }
        return try RecoveryPipeline.openUserShare(text: text, method: method, secret: secret, progress: progress)
    }

    private func performRecovery(
        userShare: ShareRecord, method: BackupMethod, progress: (RecoveryStatus) -> Void
    ) async throws -> ShareRecord {
        progress(.recoveringSigningShare)
        let request = ResharingSessionRequest(
            clientId: configuration.userId, purpose: .recovery(method), clientShare: userShare)
        let (sessionId, dealt) = try await reshareWithCustodian(request, ownShare: userShare, newKind: .signing)
        let custodian = configuration.custodian
        let pending = PendingSession(sessionId: sessionId, purpose: .recovery)
        let verified = try await abandoningOnFailure(pending) {
            try RecoveryPipeline.checkCancellation()
            progress(.generatingShare)
            let result = try await custodian.finishSession(id: sessionId, clientDealing: dealt.outgoingDealing)
            let newShare = try dealt.finish(result: result)
            try RecoveryPipeline.checkCancellation()
            let verified = try RecoveryPipeline.verifyNewShares([newShare], from: userShare, progress: progress)[0]

            progress(.storingShare)
            try await stage(verified)
            return verified
        }
        try await confirmAndPromote(pending)
        // One-time methods are spent; a failure to delete them must not undo a finished recovery.
        if method.isOneTime { try? await deleteMethodData(method) }
        progress(.done)
        return verified
    }

    /// The same recovery, told as ``RecoveryEvent``s: every §8 status with its step of eight, the
    /// elapsed time and the request id, each retry of a network call with its attempt number, and on
    /// failure one `failed` event saying whether trying again may help and what to do.
    /// - Parameters:
    ///   - method: The backup method.
    ///   - cipherText: The cipherText text, or `nil`/empty to fetch it from the configured source.
    ///   - secret: The secret for the method.
    ///   - events: Told every event, in order.
    /// - Returns: The new signing share (stored and current when this returns).
    /// - Throws: As ``recover(method:cipherText:secret:progress:)``, after the `failed` event.
    @discardableResult
    public func recover(
        method: BackupMethod, cipherText: String? = nil, secret: BackupSecret,
        events: @escaping @Sendable (RecoveryEvent) -> Void
    ) async throws -> ShareRecord {
        let tracker = RecoveryEventTracker(
            requestId: OperationContext.current?.requestId ?? OperationContext.newRequestId(), emit: events)
        do {
            return try await OperationContext.$current.withValue(tracker.context) {
                try await recover(method: method, cipherText: cipherText, secret: secret, progress: tracker.status)
            }
        } catch {
            tracker.failed(error)
            throw error
        }
    }

    /// The same recovery as an asynchronous stream of statuses; the stream ends after `done` or
    /// with the error. Cancelling the consuming task cancels the recovery.
    public func recoveryStatuses(
        method: BackupMethod, cipherText: String? = nil, secret: BackupSecret
    ) -> AsyncThrowingStream<RecoveryStatus, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await recover(method: method, cipherText: cipherText, secret: secret) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Lifecycle

    /// The backup methods that currently have a stored cipherText.
    public func activatedRecoveryMethods() async throws -> [BackupMethod] {
        guard let store = configuration.cipherTextStore else { return [] }
        return try await store.storedMethods(userId: configuration.userId)
    }

    /// Whether any recovery method is set up.
    public func isRecoveryActivated() async throws -> Bool {
        try await !activatedRecoveryMethods().isEmpty
    }

    /// Adds a method, or rotates it (a new backup set; the old cipherText stops working).
    @discardableResult
    public func addOrUpdateRecoveryMethod(_ method: BackupMethod, secret: BackupSecret, keyId: String = "") async throws
        -> CipherText
    {
        try await backup(method: method, secret: secret, keyId: keyId)
    }

    /// Deletes a method's cipherText and custodian backup share.
    /// - Parameters:
    ///   - method: The method.
    ///   - force: Delete even when it is the last method (leaving no way to recover).
    /// - Throws: ``ShareRecoveryError/Code/operationInProgress`` when another operation of this wallet runs,
    ///   ``ShareRecoveryError/Code/invalidParameters`` when it is the last method and `force` is false,
    ///   ``ShareRecoveryError/Code/notFound`` when the method is not activated.
    public func deleteRecoveryMethod(_ method: BackupMethod, force: Bool = false) async throws {
        try await operation("method deletion") {
            try await performResume()
            try await performDeletion(method, force: force)
        }
    }

    private func performDeletion(_ method: BackupMethod, force: Bool) async throws {
        let active = try await activatedRecoveryMethods()
        guard active.contains(method) else { throw ShareRecoveryError(.notFound, "\(method) is not activated") }
        guard force || active.count > 1 else {
            throw ShareRecoveryError(
                .invalidParameters, "\(method) is the last recovery method; pass force to delete it")
        }
        try await deleteMethodData(method)
    }

    func deleteMethodData(_ method: BackupMethod) async throws {
        try await configuration.custodianBackupSink?.deleteBackupShares(clientId: configuration.userId, method: method)
        try await configuration.cipherTextStore?.deleteCipherText(userId: configuration.userId, method: method)
    }

    // MARK: Shared steps

    /// Runs one operation of the wallet: alone (``SingleFlight``), and under one request id that every
    /// call it makes carries (an ``OperationContext`` the caller set is kept).
    func operation<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
        try await SingleFlight.run(store: configuration.shareStore, operation: name) {
            if OperationContext.current != nil { return try await body() }
            return try await OperationContext.$current.withValue(OperationContext()) { try await body() }
        }
    }
}
