public import Logging
public import ShareCrypto

/// Everything the reference server needs to start. The defaults make a single-machine demo: SQLite in the
/// working directory, a master key and webhook secret generated next to the database file, one-time codes
/// appended to a file.
///
/// The `serve` command of the CLI fills this from its options; embedders (and tests) build it directly.
public struct ServerConfiguration: Sendable {
    /// Where the server keeps its state.
    public enum Database: Sendable, Equatable {
        /// An SQLite file (WAL mode), created when missing.
        case sqlite(path: String)
        /// A PostgreSQL database, as `postgres://user:password@host:port/database` with optional query
        /// parameters `sslmode=disable|prefer|require` (default `prefer`) and `schema=name` (created when
        /// missing; tables live there instead of `public`).
        case postgres(url: String)
    }

    /// Where a secret comes from. Secrets are never taken from command-line arguments.
    public enum SecretSource: Sendable {
        /// A file holding the secret: for the master key 64 hex digits (one trailing newline ignored);
        /// for the webhook secret and the metrics token the text, one value a line (blank lines and
        /// trailing `\r` and spaces ignored), the first sent and all accepted (`SecretRing`).
        case file(path: String)
        /// An environment variable holding the secret, in the same form as a file.
        case environment(name: String)
        /// The secret bytes themselves: 32 bytes for the master key, the text's bytes (its lines) for the others.
        case value(SecureBytes)
        /// Demo only: read the file when it exists, otherwise generate a random secret and write it there
        /// (mode 0600, created exclusively so two starting processes agree on one secret).
        case generatedFile(path: String)
    }

    /// A fixed-window rate limit.
    public struct RateLimit: Sendable, Equatable {
        /// Attempts allowed per window.
        public var limit: Int
        /// Window length in seconds.
        public var windowSeconds: Int

        /// - Parameters:
        ///   - limit: Attempts allowed per window.
        ///   - windowSeconds: Window length in seconds.
        public init(limit: Int, windowSeconds: Int) {
            self.limit = limit
            self.windowSeconds = windowSeconds
        }
    }

    /// The rate limits of the OTP endpoints (HTTP 429 beyond them).
    public struct RateLimits: Sendable, Equatable {
        /// `POST /recovery/flows/{id}/verify` per flow identifier (user id or email).
        public var verifyPerIdentifier: RateLimit
        /// `POST /recovery/flows/{id}/verify` per client IP address.
        public var verifyPerAddress: RateLimit
        /// `POST /recovery/flows` per identifier (each one sends a code).
        public var flowCreationPerIdentifier: RateLimit
        /// `POST /recovery/flows` per client IP address.
        public var flowCreationPerAddress: RateLimit

        /// - Parameters:
        ///   - verifyPerIdentifier: Verify attempts per identifier.
        ///   - verifyPerAddress: Verify attempts per client address.
        ///   - flowCreationPerIdentifier: New flows per identifier.
        ///   - flowCreationPerAddress: New flows per client address.
        public init(
            verifyPerIdentifier: RateLimit, verifyPerAddress: RateLimit, flowCreationPerIdentifier: RateLimit,
            flowCreationPerAddress: RateLimit
        ) {
            self.verifyPerIdentifier = verifyPerIdentifier
            self.verifyPerAddress = verifyPerAddress
            self.flowCreationPerIdentifier = flowCreationPerIdentifier
            self.flowCreationPerAddress = flowCreationPerAddress
        }

        /// 10 verifications per identifier and 100 per address per 15 minutes; 5 new flows per identifier and
        /// 50 per address per 15 minutes.
        public static let standard = RateLimits(
            verifyPerIdentifier: .init(limit: 10, windowSeconds: 900),
            verifyPerAddress: .init(limit: 100, windowSeconds: 900),
            flowCreationPerIdentifier: .init(limit: 5, windowSeconds: 900),
            flowCreationPerAddress: .init(limit: 50, windowSeconds: 900))

        /// These limits with the per-address ones multiplied by `factor`, for a front proxy through which
        /// many users reach the server from one address, or a test rig; the per-identifier limits, which
        /// protect each user's codes, stay as they are.
        /// - Parameter factor: How many times the per-address limits allow (1 or more).
        public func scalingPerAddress(by factor: Int) -> RateLimits {
            // Saturating, and never below the limits themselves.
            func scaled(_ limit: Int) -> Int {
                let (product, overflow) = limit.multipliedReportingOverflow(by: max(1, factor))
                return overflow ? Int.max : product
            }
            var result = self
            result.verifyPerAddress.limit = scaled(verifyPerAddress.limit)
            result.flowCreationPerAddress.limit = scaled(flowCreationPerAddress.limit)
            return result
        }
    }

    /// The environment variable read for the master key when ``masterKey`` is `nil`.
    public static let masterKeyEnvironmentVariable = "SHARE_RECOVERY_MASTER_KEY"
    /// The environment variable read for the webhook secret when ``webhookSecret`` is `nil`.
    public static let webhookSecretEnvironmentVariable = "SHARE_RECOVERY_WEBHOOK_SECRET"
    /// The largest request body the contract allows.
    public static let defaultMaximumBodySize = 256 * 1024

    /// The address to bind; `127.0.0.1` unless the server must be reachable from other machines.
    public var host: String
    /// The TCP port; 0 picks a free one (reported through `onStarted`).
    public var port: Int
    /// HTTPS on ``port`` with this certificate and key; `nil` (the default): plain HTTP, for a proxy or load
    /// balancer in front that terminates TLS (docs/server.md, "TLS").
    public var tls: ServerTLS?
    /// Where state lives.
    public var database: Database
    /// With PostgreSQL: the pool, timeouts, password, TLS and whether to migrate at start (an SQLite
    /// database is always migrated at start).
    public var postgres: PostgresSettings
    /// The 32-byte master key that encrypts the custodian's secrets at rest and keys tokens and code hashes.
    /// `nil`: the ``masterKeyEnvironmentVariable`` when set, else (SQLite only) the demo file
    /// `<database path>.master-key`, generated on first start with mode 0600.
    public var masterKey: SecretSource?
    /// The shared secret integrators send as `X-Webhook-Secret` (and the server sends to the fetch webhook):
    /// one value a line, the first sent and every one accepted, so it rotates without downtime.
    /// `nil`: the ``webhookSecretEnvironmentVariable`` when set, else (SQLite only) the demo file
    /// `<database path>.webhook-secret`, generated on first start with mode 0600.
    public var webhookSecret: SecretSource?
    /// The integrator's webhook base URL: recovery sessions fetch custodian backup shares from
    /// `{webhookBase}/backup/fetch`. `nil`: this server's own `/webhook` (it is its own integrator).
    public var webhookBase: String?
    /// How one-time codes reach users. `nil`: a ``FileOTPSender`` on `share-recovery-otp.jsonl` (demo).
    public var otpSender: (any OTPSender)?
    /// Lifetime of issued tokens, in seconds.
    public var tokenLifetimeSeconds: Int
    /// Lifetime of an OTP flow, in seconds.
    public var flowLifetimeSeconds: Int
    /// Lifetime of a resharing session, in seconds.
    public var sessionLifetimeSeconds: Int
    /// How long a confirmed resharing session stays answerable, in seconds (default 30 days): a
    /// device cut off between confirm and its promotion learns from it, when it starts again, that
    /// its staged share is the current one (`DELETE` answers 409). After that, `DELETE` answers 404
    /// and the device discards its staged share; it can still recover again from its backup.
    public var confirmedSessionRetentionSeconds: Int
    /// How long the answer to a request with an `Idempotency-Key` that changed something is kept, in
    /// seconds (default 1 day): a repeat within it gets the same answer and changes nothing again.
    public var idempotencyRetentionSeconds: Int
    /// How long a request holds its `Idempotency-Key` before another request with the same key may
    /// take it over (default 60 s): the first is presumed dead, and its change, if it still tries to
    /// commit one, is refused.
    public var idempotencyLeaseSeconds: Int
    /// Timeout of calls to the integrator's fetch webhook, in seconds.
    public var webhookTimeoutSeconds: Int
    /// How long a SIGTERM or SIGINT waits for requests in flight before cancelling them, in seconds
    /// (default 30; `runServer`). New connections are refused from the signal on.
    public var shutdownGraceSeconds: Int
    /// How long a SIGTERM or SIGINT lets `GET /ready` answer 503, with everything else still served,
    /// before the listener closes, in seconds (default 2, 0 to 60; `runServer`): time for a load
    /// balancer's readiness probe to take the process out of rotation. It counts into
    /// ``shutdownGraceSeconds``.
    public var drainSeconds: Int
    /// Largest accepted request body in bytes (413 beyond).
    public var maximumBodySize: Int
    /// OTP rate limits.
    public var rateLimits: RateLimits
    /// The proxies whose forwarding header names the client the per-address limits count against
    /// (default none: the TCP peer is the client, and forwarding headers are ignored).
    public var trustedProxies: TrustedProxies
    /// How many devices a wallet may have, counting the one that created or recovered it (default 8,
    /// at least 1): adding one more is refused with `deviceLimitReached` (docs/devices.md).
    public var maximumDevicesPerWallet: Int
    /// How old, in seconds, the wallet's primary signing set may be before signing with it is refused
    /// with `refreshRequired` until the device refreshes it (docs/server.md, "Refresh policy"); `nil`
    /// (the default): never.
    public var refreshAfterSeconds: Int64?
    /// The bearer token a Prometheus scraper sends to read `GET /metrics` (at least 16 bytes; the same
    /// sources and lines as the webhook secret, every line accepted). `nil` (the default): `/metrics` is off and answers 404, so an
    /// operator turns it on knowingly; `/health` and `/ready` need no credential.
    public var metricsToken: SecretSource?
    /// Where integrator events are delivered (docs/server.md, "Integrator events"); `nil` (the default):
    /// they wait in the outbox, for `share-recovery events list`, until a server delivers them.
    public var events: EventsConfiguration?
    /// The server's logger.
    public var logger: Logger
    /// This process's clock, which decides on SQLite only (tests move it to expire flows and tokens, or
    /// skew it to show that on PostgreSQL it decides nothing).
    package var clock: ServerClock
    /// Seconds added to PostgreSQL's clock, read at each use: 0, except in tests, which move the
    /// database's time with it as they move ``clock``.
    package var databaseClockOffset: @Sendable () -> Int64
    /// About one flow creation in this many purges what has expired (16; tests purge on every one).
    package var flowCreationsPerPurge: Int

    /// Creates a configuration; every parameter has the demo default.
    /// - Parameters:
    ///   - host: Bind address.
    ///   - port: TCP port (0: any free port).
    ///   - database: SQLite path or PostgreSQL URL.
    ///   - masterKey: The master key's source.
    ///   - webhookSecret: The webhook secret's source.
    ///   - webhookBase: The integrator's webhook base URL.
    ///   - otpSender: How one-time codes are delivered.
    ///   - tokenLifetimeSeconds: Token lifetime (default 10 minutes).
    ///   - flowLifetimeSeconds: OTP flow lifetime (default 10 minutes).
    ///   - sessionLifetimeSeconds: Resharing session lifetime (default 15 minutes).
    ///   - rateLimits: OTP rate limits.
    ///   - logger: The logger.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: Database = .sqlite(path: "share-recovery.sqlite"),
        masterKey: SecretSource? = nil, webhookSecret: SecretSource? = nil, webhookBase: String? = nil,
        otpSender: (any OTPSender)? = nil, tokenLifetimeSeconds: Int = 600, flowLifetimeSeconds: Int = 600,
        sessionLifetimeSeconds: Int = 900, rateLimits: RateLimits = .standard,
        logger: Logger = Logger(label: "share-recovery-server")
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.postgres = PostgresSettings()
        self.tls = nil
        self.masterKey = masterKey
        self.webhookSecret = webhookSecret
        self.webhookBase = webhookBase
        self.otpSender = otpSender
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.flowLifetimeSeconds = flowLifetimeSeconds
        self.sessionLifetimeSeconds = sessionLifetimeSeconds
        self.webhookTimeoutSeconds = 10
        self.confirmedSessionRetentionSeconds = 30 * 86_400
        self.idempotencyRetentionSeconds = 86_400
        self.idempotencyLeaseSeconds = 60
        self.maximumBodySize = Self.defaultMaximumBodySize
        self.rateLimits = rateLimits
        self.trustedProxies = TrustedProxies()
        self.maximumDevicesPerWallet = 8
        self.refreshAfterSeconds = nil
        self.metricsToken = nil
        self.events = nil
        self.shutdownGraceSeconds = 30
        self.drainSeconds = 2
        self.logger = logger
        self.clock = .system
        self.databaseClockOffset = { 0 }
        self.flowCreationsPerPurge = 16
    }
}
