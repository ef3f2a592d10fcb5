import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// A wallet with a password backup made in process: the custodian's backup share sits in an
/// in-memory integrator, and the cipherText is served over HTTP by each test.
struct World {
    static let userId = "user-1"
    static let password = "correct horse"

    let integrator = InMemoryIntegrator()
    let custodian: LocalCustodian
    let signing: [ShareRecord]
    let cipherText: String
    let random: DeterministicRandom

    init(seed: String) async throws {
        random = DeterministicRandom(seed: Array(seed.utf8))
        signing = try KeyGeneration.generate(curve: .secp256k1, walletId: "w-http", using: random)
        custodian = LocalCustodian(key: SealingKeyPair(using: random), shareSource: integrator, random: random)
        await custodian.register(signingShares: Array(signing.dropFirst()), clientId: Self.userId)
        let engine = RecoveryEngine(
            configuration: .init(
                userId: Self.userId, custodian: custodian, shareStore: InMemorySigningShareStore(current: signing[0]),
                cipherTextStore: integrator, custodianBackupSink: integrator, argon2: .minimum, random: random))
        cipherText = try await engine.backup(method: .password, secret: .text(Self.password)).base64
    }

    /// An engine in managed mode: the cipherText comes from `source`, the custodian is in process.
    func engine(source: any CipherTextSource, store: InMemorySigningShareStore) -> RecoveryEngine {
        RecoveryEngine(
            configuration: .init(
                userId: Self.userId, custodian: custodian, shareStore: store, cipherTextSource: source,
                cipherTextStore: integrator, custodianBackupSink: integrator, argon2: .minimum, random: random))
    }
}

/// Short timeouts and backoffs so failure tests stay fast.
func testTransport(
    timeout: Duration = .seconds(1), attemptTimeout: Duration = .seconds(5), attempts: Int = 3,
    maximumResponseSize: Int = 256 * 1024
) -> HTTPTransport {
    HTTPTransport(
        configuration: .init(
            timeout: timeout, attemptTimeout: attemptTimeout, maximumAttempts: attempts,
            initialBackoff: .milliseconds(10),
            maximumBackoff: .milliseconds(40), maximumResponseSize: maximumResponseSize))
}
