public import ShareCrypto

/// Recovery with both roles in one process: the holder of the custodian key runs the custodian's
/// half locally (offline recovery, recovery kits, tests). It is ``RecoveryEngine`` over a
/// ``LocalCustodian`` given the custodian backup shares and an in-memory device store, so the
/// docs/formats.md §8 sequence is the engine's own; after a failure no further status is reported,
/// and nothing is stored.
public enum OfflineRecovery {
    /// Recovers a new signing set.
    /// - Parameters:
    ///   - cipherText: The cipherText text (base64).
    ///   - secret: The secret for its method.
    ///   - custodianShares: The custodian's §6 JSON strings for this client.
    ///   - custodianKey: The custodian's X25519 key pair.
    ///   - store: Persists the new signing set; called between `storingShare` and `done`.
    ///   - progress: Told every status as it begins.
    ///   - random: The random source.
    /// - Returns: The new signing set (generation = backup generation + 1), party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any step; `cancelled` when the task is cancelled.
    public static func recover(
        cipherText: String, secret: BackupSecret, custodianShares: [String], custodianKey: SealingKeyPair,
        store: @escaping @Sendable ([ShareRecord]) throws -> Void = { _ in },
        progress: (RecoveryStatus) -> Void = { _ in }, using random: some RandomSource = SystemRandom()
    ) async throws(ShareRecoveryError) -> [ShareRecord] {
        let session = Session(
            custodianShares: custodianShares, custodianKey: custodianKey, store: store, random: random)
        return try await session.run { engine in
            let (envelope, userShare) = try await engine.openCipherText(
                method: nil, cipherText: cipherText, secret: secret, progress: progress)
            return try await engine.recover(userShare: userShare, method: envelope.method, progress: progress)
        }
    }

    /// The second half of a recovery, from an already decrypted user backup share (a recovery kit
    /// gives one back). Reports `recoveringSigningShare` through `done`.
    /// - Parameters:
    ///   - userShare: The user backup share, with its secret.
    ///   - method: The backup method of its set.
    ///   - custodianShares: The custodian's §6 JSON strings for this client.
    ///   - custodianKey: The custodian's X25519 key pair.
    ///   - store: Persists the new signing set; called between `storingShare` and `done`.
    ///   - progress: Told every status as it begins.
    ///   - random: The random source.
    /// - Returns: The new signing set, party 1 first.
    /// - Throws: ``ShareRecoveryError`` from any step.
    public static func recover(
        userShare: ShareRecord, method: BackupMethod, custodianShares: [String], custodianKey: SealingKeyPair,
        store: @escaping @Sendable ([ShareRecord]) throws -> Void = { _ in },
        progress: (RecoveryStatus) -> Void = { _ in }, using random: some RandomSource = SystemRandom()
    ) async throws(ShareRecoveryError) -> [ShareRecord] {
        let session = Session(
            custodianShares: custodianShares, custodianKey: custodianKey, store: store, random: random)
        return try await session.run { engine in
            try await engine.recover(userShare: userShare, method: method, progress: progress)
        }
    }

    /// One offline recovery's engine: a custodian in process that sees only the given backup shares,
    /// and a device store that hands the whole new set to the caller's `store` when it is promoted
    /// (the custodian has confirmed by then, so its new shares are known).
    private struct Session {
        static let clientId = "offline"
        let custodian: LocalCustodian
        let deviceStore: SetStore
        let engine: RecoveryEngine

        init(
            custodianShares: [String], custodianKey: SealingKeyPair,
            store: @escaping @Sendable ([ShareRecord]) throws -> Void, random: some RandomSource
        ) {
            custodian = LocalCustodian(
                key: custodianKey, shareSource: GivenShares(shares: custodianShares), random: random)
            deviceStore = SetStore(custodian: custodian, clientId: Self.clientId, persist: store)
            engine = RecoveryEngine(
                configuration: .init(
                    userId: Self.clientId, custodian: custodian, shareStore: deviceStore, random: random))
        }

        /// Runs the engine's recovery and answers the set the store was handed.
        func run(_ body: (RecoveryEngine) async throws -> ShareRecord) async throws(ShareRecoveryError)
            -> [ShareRecord]
        {
            do {
                _ = try await body(engine)
            } catch let error as ShareRecoveryError {
                throw error
            } catch {
                // Everything the engine calls here throws ShareRecoveryError but the caller's store.
                throw ShareRecoveryError(.storageFailure, "storing the new signing set failed: \(error)")
            }
            return await deviceStore.promotedSet
        }
    }

    /// The custodian backup shares the caller read, as the custodian's share source.
    private struct GivenShares: CustodianShareSource {
        let shares: [String]
        func fetchBackupShares(clientId: String) -> [String] { shares }
    }

    /// The device store of an offline recovery: in memory, and on promotion it persists the new
    /// signing set through the caller, the device's share and the custodian's new ones sorted by party.
    private actor SetStore: SigningShareStore {
        private let custodian: LocalCustodian
        private let clientId: String
        private let persist: @Sendable ([ShareRecord]) throws -> Void
        private var current: ShareRecord?
        private var staged: ShareRecord?
        private var pending: PendingSession?
        /// The whole new signing set, once promoted.
        private(set) var promotedSet: [ShareRecord] = []

        init(custodian: LocalCustodian, clientId: String, persist: @escaping @Sendable ([ShareRecord]) throws -> Void) {
            self.custodian = custodian
            self.clientId = clientId
            self.persist = persist
        }

        func currentShare() -> ShareRecord? { current }
        func stagedShare() -> ShareRecord? { staged }
        func stage(_ share: ShareRecord) { staged = share }
        func discardStaged() { staged = nil }
        func pendingSession() -> PendingSession? { pending }
        func recordPendingSession(_ session: PendingSession) { pending = session }
        func clearPendingSession() { pending = nil }

        func promoteStaged() async throws {
            guard let staged else { throw ShareRecoveryError(.notFound, "no staged share to promote") }
            let custodianShares = await custodian.currentSigningShares(clientId: clientId).filter {
                $0.setId == staged.setId
            }
            let set = ([staged] + custodianShares).sorted { $0.partyIndex < $1.partyIndex }
            try persist(set)
            promotedSet = set
            current = staged
            self.staged = nil
        }
    }
}
