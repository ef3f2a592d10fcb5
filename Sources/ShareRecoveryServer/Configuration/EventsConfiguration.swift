/// How a server delivers the integrator events of its outbox (docs/server.md, "Integrator events").
public struct EventsConfiguration: Sendable {
    /// The receiver's URL; each event is POSTed to it, signed per Standard Webhooks.
    public var url: String
    /// The file of `whsec_…` secrets, one per line; the first signs.
    public var secretFile: String
    /// Attempts after which an event is dead (it waits for `share-recovery events redeliver`).
    public var maximumAttempts: Int
    /// Seconds one attempt may take.
    public var timeoutSeconds: Int
    /// Milliseconds between looks at the outbox while nothing is due.
    package var pollMilliseconds: Int64 = 250
    /// The first retry's delay; each further one doubles it, up to ``maximumBackoffMilliseconds``.
    package var initialBackoffMilliseconds: Int64 = 1_000
    package var maximumBackoffMilliseconds: Int64 = 600_000
    /// How long a claim holds before another worker may take the event over (its worker presumed dead).
    package var leaseMilliseconds: Int64 = 60_000
    /// The most events one look at the outbox claims (at most one per account).
    package var claimLimit = 32
    /// Milliseconds between refreshes of the pending and dead gauges of `/metrics`.
    package var gaugeMilliseconds: Int64 = 5_000

    /// The default number of attempts: with the default backoff, retries span about 30 to 60 minutes.
    public static let defaultMaximumAttempts = 15

    /// - Parameters:
    ///   - url: The receiver's URL.
    ///   - secretFile: The file of `whsec_…` secrets, one per line; the first signs.
    ///   - maximumAttempts: Attempts after which an event is dead (at least 1).
    ///   - timeoutSeconds: Seconds one attempt may take.
    public init(
        url: String, secretFile: String, maximumAttempts: Int = defaultMaximumAttempts, timeoutSeconds: Int = 10
    ) {
        self.url = url
        self.secretFile = secretFile
        self.maximumAttempts = maximumAttempts
        self.timeoutSeconds = timeoutSeconds
    }
}
