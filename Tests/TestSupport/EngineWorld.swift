public import ShareCrypto
public import ShareRecovery

/// One wallet in process, for the engine's tests in every target: a deterministic 2-party signing
/// set, a `LocalCustodian` holding the custodian's shares, an `InMemoryIntegrator` standing for the
/// integrator's API and webhooks, and the user's device.
public struct EngineWorld {
    public let integrator = InMemoryIntegrator()
    public let custodian: LocalCustodian
    public let device: InMemorySigningShareStore
    public let engine: RecoveryEngine
    public let signing: [ShareRecord]
    public let userId: String

    /// - Parameters:
    ///   - seed: Every random choice (the key, the custodian's key, the engine's) derives from it.
    public init(
        curve: Curve = .secp256k1, threshold: Int = 2, parties: Int = 2, walletId: String = "w-1",
        userId: String = "user-1", seed: String
    ) async throws {
        let random = DeterministicRandom(seed: Array(seed.utf8))
        signing = try KeyGeneration.generate(
            curve: curve, walletId: walletId, threshold: threshold, parties: parties, using: random)
        custodian = LocalCustodian(key: SealingKeyPair(using: random), shareSource: integrator, random: random)
        await custodian.register(signingShares: Array(signing.dropFirst()), clientId: userId)
        device = InMemorySigningShareStore(current: signing[0])
        self.userId = userId
        engine = RecoveryEngine(
            configuration: .init(
                userId: userId, custodian: custodian, shareStore: device, cipherTextSource: integrator,
                cipherTextStore: integrator, custodianBackupSink: integrator, argon2: .minimum, random: random))
    }

    /// A new device after the loss: empty store, same integrator and custodian.
    public func newDevice() -> (RecoveryEngine, InMemorySigningShareStore) {
        let store = InMemorySigningShareStore()
        var configuration = engine.configuration
        configuration.shareStore = store
        return (RecoveryEngine(configuration: configuration), store)
    }

    /// The custodian backup shares the integrator holds for a method.
    public func custodianShares(_ method: BackupMethod) async -> [CustodianBackupShare] {
        await integrator.fetchBackupShares(clientId: userId).compactMap { try? CustodianBackupShare(json: $0) }
            .filter { $0.backupMethod == method }
    }
}

/// The docs/formats.md §8 statuses a recovery reported, in order, from any task.
public final class StatusLog: Sendable {
    private let statuses = Locked<[RecoveryStatus]>([])
    public init() {}
    public func append(_ status: RecoveryStatus) { statuses.withLock { $0.append(status) } }
    public var all: [RecoveryStatus] { statuses.withLock { $0 } }
}
