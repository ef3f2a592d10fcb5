import CoreMetrics
import Prometheus
import ShareCrypto

/// What an on-call engineer reads from `/metrics`: requests per route and status with their latency,
/// the protocol sessions and one-time-code attempts by outcome, and the database's use. Prometheus
/// text exposition (swift-prometheus), through the swift-metrics API.
///
/// Each server has a registry of its own, handed to swift-metrics as an explicit factory rather than
/// through the process-wide `MetricsSystem`: an application that embeds the server keeps its own
/// metrics backend, and several servers in one process (the tests) never mix their counts.
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Latency buckets from 1 ms to 10 s: a request here is sub-millisecond to a webhook timeout.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .seconds(2), .seconds(5), .seconds(10),
        ]
        self.factory = factory
        // Present from the start, so a dashboard shows 0 rather than no data.
        databaseInFlight = Meter(label: "share_recovery_database_operations_in_flight", factory: factory)
        databaseInFlight.set(0)
    }

    /// Transactions and reads running now: with PostgreSQL, the connections of the pool in use.
    let databaseInFlight: Meter

    /// The two metrics of each route, method and status seen, made once: making them looks them up in
    /// the registry under its lock and sorts their labels, a cost every request paid in the profile
    /// (docs/server.md, "Throughput").
    private let requestMetrics = Locked<[RequestSeries: (CoreMetrics.Counter, CoreMetrics.Timer)]>([:])

    private struct RequestSeries: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    /// The methods a series may name; any other is `other`, so a client inventing methods cannot add
    /// series without bound.
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"]

    /// The exposition of every metric, `text/plain; version=0.0.4`.
    func exposition() -> [UInt8] { registry.emitToBuffer() }

    /// One answered request: `http_server_requests_total` and `http_server_request_duration_seconds`,
    /// by route template (never the concrete path, which would name users), method and status.
    func request(route: String, method: String, status: Int, nanoseconds: UInt64) {
        let series = RequestSeries(
            route: route, method: Self.methods.contains(method) ? method : "other", status: status)
        let factory = self.factory
        let (counter, timer) = requestMetrics.withLock { made in
            if let both = made[series] { return both }
            let dimensions = [("route", series.route), ("method", series.method), ("status", String(series.status))]
            let both = (
                Counter(label: "http_server_requests_total", dimensions: dimensions, factory: factory),
                Timer(label: "http_server_request_duration_seconds", dimensions: dimensions, factory: factory)
            )
            made[series] = both
            return both
        }
        counter.increment()
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// A protocol session's step: `share_recovery_sessions_total{protocol, event, reason}`, where
    /// `protocol` is `backup`, `recovery`, `refresh`, `dkg`, `signing`, `deviceAdd`, `ecdsaPairSetup` or
    /// `ecdsaSigning`, `event` is `started`, `completed`, `failed` or `aborted`, and `reason` the
    /// failure's stable code, or for an aborted ECDSA signature the check that failed (empty otherwise).
    func session(_ protocolName: String, _ event: SessionEvent, reason: String = "") {
        Counter(
            label: "share_recovery_sessions_total",
            dimensions: [("protocol", protocolName), ("event", event.rawValue), ("reason", reason)], factory: factory
        ).increment()
    }

    /// One one-time-code verification: `share_recovery_otp_attempts_total{outcome}` with `verified`,
    /// `wrongCode`, `exhausted` (the fifth wrong code), `flowEnded` or `rateLimited`.
    func otpAttempt(_ outcome: String) {
        Counter(label: "share_recovery_otp_attempts_total", dimensions: [("outcome", outcome)], factory: factory)
            .increment()
    }

    /// The outbox's undelivered events: `share_recovery_events{state}` with `pending` and `dead`
    /// (refreshed by the delivery worker of `serve --events-url`).
    func events(pending: Int, dead: Int) {
        for (state, count) in [("pending", pending), ("dead", dead)] {
            Gauge(label: "share_recovery_events", dimensions: [("state", state)], factory: factory).record(count)
        }
    }

    /// A secret this process holds: `share_recovery_secret_values{secret, key_id}`, the number of its
    /// values, labelled with the key id of the one it signs or sends with (``SecretRing/keyId``). A fleet
    /// whose processes show different key ids for one secret is misconfigured; a count above 1 is a
    /// rotation in progress (docs/server.md, "Rotating secrets").
    func secret(_ name: String, keyId: String, values: Int) {
        Gauge(
            label: "share_recovery_secret_values", dimensions: [("secret", name), ("key_id", keyId)], factory: factory
        )
        .record(values)
    }

    /// An event a receiver took: `share_recovery_events_delivered_total`.
    func eventDelivered() {
        Counter(label: "share_recovery_events_delivered_total", factory: factory).increment()
    }

    /// A failed attempt: `share_recovery_event_attempts_failed_total`, and
    /// `share_recovery_events_dead_total` when it was the event's last.
    func eventAttemptFailed(dead: Bool) {
        Counter(label: "share_recovery_event_attempts_failed_total", factory: factory).increment()
        if dead { Counter(label: "share_recovery_events_dead_total", factory: factory).increment() }
    }

    enum SessionEvent: String, Sendable {
        case started, completed, failed, aborted
    }
}
