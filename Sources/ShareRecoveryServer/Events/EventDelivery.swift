import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The delivery worker of `serve --events-url` (docs/server.md, "Integrator events"): claims the due
/// events of the outbox, POSTs each signed per Standard Webhooks, and records the answer. At least
/// once: an event is marked delivered only after a 2xx, so a crash between the two sends it again,
/// with the same `webhook-id` and body. Several servers on one database share the work through the
/// claims (``ServerStorage/claimEvents(worker:now:lease:limit:)``).
final class EventDelivery: Service, Sendable {
    private let storage: any ServerStorage
    private let configuration: EventsConfiguration
    private let signer: StandardWebhooksSigner
    private let metrics: ServerMetrics
    private let logger: Logger
    /// This worker's claim owner: random per process, so a restarted server's old claims run out.
    let worker = "worker-" + String(UInt64.random(in: .min ... .max), radix: 16)

    init(
        storage: any ServerStorage, configuration: EventsConfiguration, signer: StandardWebhooksSigner,
        metrics: ServerMetrics, logger: Logger
    ) {
        self.storage = storage
        self.configuration = configuration
        self.signer = signer
        self.metrics = metrics
        self.logger = logger
    }

    /// Refuses a configuration no delivery could work with.
    static func validate(_ events: EventsConfiguration) throws(ServerStartError) {
        guard events.url.hasPrefix("http://") || events.url.hasPrefix("https://") else {
            throw ServerStartError(.invalidConfiguration, "the events URL must be an http:// or https:// URL")
        }
        guard (1...100).contains(events.maximumAttempts) else {
            throw ServerStartError(.invalidConfiguration, "the events' maximum attempts must be 1 to 100")
        }
        guard (1...600).contains(events.timeoutSeconds) else {
            throw ServerStartError(.invalidConfiguration, "the events' attempt timeout must be 1 to 600 seconds")
        }
    }

    /// This process's wall-clock Unix milliseconds: `webhook-timestamp`, which receivers check against
    /// their own clocks, and SQLite's deciding time.
    static var nowMilliseconds: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// The deciding time for claims and retries, which the fleet's processes compare: the database's
    /// on PostgreSQL (ServerStorage+Clock.swift), so a process whose clock runs ahead neither takes
    /// over another's claim early nor retries early.
    private func decidingNow() async throws -> Int64 {
        try await storage.currentMilliseconds(process: Self.nowMilliseconds)
    }

    func run() async throws {
        var gaugesDue: Int64 = 0
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let now = Self.nowMilliseconds
            if now >= gaugesDue {
                gaugesDue = now + configuration.gaugeMilliseconds
                if let counts = try? await storage.undeliveredEventCounts() {
                    metrics.events(pending: counts.pending, dead: counts.dead)
                }
            }
            let claimed: Int
            do {
                claimed = try await deliverDue(now: try await decidingNow())
            } catch {
                // The database is away: the claims it may hold run out, and the next look tries again.
                logger.warning("event delivery cannot read the outbox", metadata: ["error": "\(error)"])
                claimed = 0
            }
            if claimed == 0 { try? await Task.sleep(for: .milliseconds(configuration.pollMilliseconds)) }
        }
    }

    /// One look at the outbox: claims what is due and delivers it, accounts in parallel.
    /// - Returns: How many events were claimed.
    func deliverDue(now: Int64) async throws -> Int {
        guard try await storage.hasDueEvents(now: now) else { return 0 }
        let claimed = try await storage.claimEvents(
            worker: worker, now: now, lease: configuration.leaseMilliseconds, limit: configuration.claimLimit)
        await withTaskGroup(of: Void.self) { group in
            for claim in claimed { group.addTask { await self.deliver(claim) } }
        }
        return claimed.count
    }

    private func deliver(_ claim: ClaimedEvent) async {
        let failure = await attempt(claim.event)
        do {
            guard let failure else {
                try await storage.eventDelivered(sequence: claim.event.sequence, now: try await decidingNow())
                metrics.eventDelivered()
                return
            }
            let attempts = claim.attempts + 1
            let dead = try await storage.eventFailed(
                sequence: claim.event.sequence, worker: worker, maximumAttempts: configuration.maximumAttempts,
                nextAttemptAt: try await decidingNow() + backoff(afterAttempts: attempts), error: failure)
            metrics.eventAttemptFailed(dead: dead)
            logger.notice(
                "event delivery failed",
                metadata: [
                    "eventId": "\(claim.event.id)", "attempt": "\(attempts)", "reason": "\(failure)",
                    "dead": "\(dead)",
                ])
        } catch {
            // Not recorded: the claim runs out and the event is tried again (at least once).
            logger.warning("event delivery cannot record an attempt", metadata: ["error": "\(error)"])
        }
    }

    /// The delay before the next attempt after `attempts` failed ones: doubling from the initial
    /// backoff up to the maximum, of which a random half is taken off (jitter), so receivers that come
    /// back are not met by every server's retries at once.
    func backoff(afterAttempts attempts: Int) -> Int64 {
        let doubling = configuration.initialBackoffMilliseconds << Int64(min(max(attempts - 1, 0), 30))
        let delay = min(configuration.maximumBackoffMilliseconds, doubling)
        return delay / 2 + Int64.random(in: 0...(delay / 2))
    }

    /// One POST; `nil` on a 2xx, else why not (a status or a transport failure, never a body).
    private func attempt(_ event: IntegratorEvent) async -> String? {
        let body = event.body
        let timestamp = Self.nowMilliseconds / 1_000
        var request = HTTPClientRequest(url: configuration.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(contentsOf: signer.headers(id: event.id, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(string: body))
        do {
            let response = try await HTTPTransport.sharedClient.execute(
                request, timeout: .seconds(Int64(configuration.timeoutSeconds)))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            return (200..<300).contains(response.status.code) ? nil : "HTTP \(response.status.code)"
        } catch {
            return "transport: \(type(of: error))"
        }
    }
}
