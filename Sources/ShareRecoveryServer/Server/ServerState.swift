import Logging
import ShareCrypto
import ShareRecovery

/// Everything the routes share. Only constants live here (keys derived at start, the custodian key loaded
/// once, the resolved webhook base): all state that changes lives in ``ServerStorage``.
final class ServerState: Sendable {
    let configuration: ServerConfiguration
    let storage: any ServerStorage
    let sealer: AtRestSealer
    let tokens: TokenAuthority
    /// One-time code hash keys, one a master key: the first hashes new codes, every one is checked.
    let otpKeys: [SecureBytes]
    /// Idempotency scope and fingerprint keys, one a master key: the first writes, every one is looked up.
    let idempotencyKeys: [SecureBytes]
    /// The integrator's shared secret: every value accepted in `X-Webhook-Secret`, the first sent.
    let webhookSecret: SecretRing
    let otpSender: any OTPSender
    let fetcher: BackupShareFetcher
    let custodianKey: SealingKeyPair
    let logger: Logger
    /// What `/metrics` shows; the storage above is already counted into it (``MeteredStorage``).
    let metrics: ServerMetrics
    /// The scraper's bearer token; `nil`: `/metrics` is off.
    let metricsToken: SecretRing?
    private let resolvedWebhookBase: Locked<String?>
    /// Begun by SIGTERM in `runServer`: `/ready` then answers 503 (ServerDrain.swift).
    let drain: ServerDrain

    /// Five wrong codes end a flow.
    static let maximumWrongAttempts = 5
    static let custodianKeyName = "custodian-x25519"

    init(
        configuration: ServerConfiguration, storage: any ServerStorage, keys: [DerivedKeys], webhookSecret: SecretRing,
        otpSender: any OTPSender, custodianKey: SealingKeyPair, metrics: ServerMetrics = ServerMetrics(),
        metricsToken: SecretRing? = nil, drain: ServerDrain = ServerDrain()
    ) {
        self.drain = drain
        self.configuration = configuration
        self.storage = MeteredStorage(base: storage, metrics: metrics)
        self.metrics = metrics
        self.metricsToken = metricsToken
        sealer = AtRestSealer(keys: keys)
        tokens = TokenAuthority(keys: keys.map(\.token))
        otpKeys = keys.map(\.otp)
        idempotencyKeys = keys.map(\.idempotency)
        self.webhookSecret = webhookSecret
        self.otpSender = otpSender
        fetcher = BackupShareFetcher(
            secret: webhookSecret.signing, timeoutSeconds: Int64(configuration.webhookTimeoutSeconds))
        self.custodianKey = custodianKey
        logger = configuration.logger
        resolvedWebhookBase = Locked(configuration.webhookBase.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }

    /// Seconds since the Unix epoch by the clock that decides (ServerStorage+Clock.swift): PostgreSQL's on
    /// PostgreSQL, never this process's; within a request, one reading for all of it (``RequestTime``).
    func now() async throws -> Int64 {
        let read = { [storage, configuration] in
            try await storage.currentTime(
                processClock: configuration.clock, databaseOffset: configuration.databaseClockOffset())
        }
        guard let time = RequestTime.current else { return try await read() }
        return try await time.value(read)
    }

    /// The configured webhook base, or this server's own `/webhook` once the port is known.
    var webhookBase: String {
        resolvedWebhookBase.withLock { $0 } ?? "http://127.0.0.1:\(configuration.port)/webhook"
    }

    /// Called when the listener is bound: the default webhook base points at ourselves.
    func serverStarted(port: Int) {
        let host =
            configuration.host == "0.0.0.0" || configuration.host == "::" || configuration.host.isEmpty
            ? "127.0.0.1" : configuration.host
        let hostPart = host.contains(":") ? "[\(host)]" : host
        resolvedWebhookBase.withLock { base in
            // With TLS its own webhook is HTTPS too: the certificate must then name this host.
            if base == nil { base = "\(configuration.tls == nil ? "http" : "https")://\(hostPart):\(port)/webhook" }
        }
    }

    /// Loads the custodian's X25519 key from storage, generating and storing it (sealed) on first start.
    static func loadCustodianKey(storage: any ServerStorage, sealer: AtRestSealer, now: Int64) async throws
        -> SealingKeyPair
    {
        let row = [custodianKeyName]
        let stored = try await storage.serverKey(
            name: custodianKeyName,
            create: {
                let fresh = SealingKeyPair()
                return (fresh.publicKey, try sealer.seal(fresh.secretKey, table: "server_keys", row: row))
            }, now: now)
        let secret = try sealer.open(stored.sealed, table: "server_keys", row: row)
        let pair: SealingKeyPair
        do {
            pair = try SealingKeyPair(secretKey: secret)
        } catch {
            throw ShareRecoveryError(.storeCorrupted, "the stored custodian key is unusable")
        }
        guard pair.publicKey == stored.publicKey else {
            throw ShareRecoveryError(.storeCorrupted, "the stored custodian key does not match its public key")
        }
        return pair
    }
}
