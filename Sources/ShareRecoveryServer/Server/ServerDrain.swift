import Logging
import ServiceLifecycle
import ShareCrypto

/// The drain before a shutdown: from SIGTERM on, `/ready` answers 503 so the load balancer takes this
/// process out of rotation, while every other route (and `/health`) still serves, until the listener
/// closes ``ServerConfiguration/drainSeconds`` later.
final class ServerDrain: Sendable {
    private let started = Locked(false)

    /// Whether the drain has begun: `/ready` then answers 503.
    var isDraining: Bool { started.withLock { $0 } }

    func begin() { started.withLock { $0 = true } }
}

/// Runs after the application in `runServer`'s service group. Services stop in reverse order, so on
/// SIGTERM this one stops first: it begins the drain and returns `seconds` later, and only then does the
/// application stop accepting connections.
struct DrainService: Service {
    let drain: ServerDrain
    let seconds: Int
    let logger: Logger

    func run() async throws {
        // Thrown on cancellation (a second signal, or a failing service): then there is nothing to drain.
        do { try await gracefulShutdown() } catch { return }
        drain.begin()
        logger.info("draining: /ready answers 503 until the listener closes", metadata: ["seconds": "\(seconds)"])
        try? await Task.sleep(for: .seconds(seconds))
    }
}
