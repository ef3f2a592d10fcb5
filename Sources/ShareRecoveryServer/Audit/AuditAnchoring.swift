import Logging
import ServiceLifecycle

/// Writes the audit trail's anchors (``ServerStorage/writeAuditAnchor(at:)``) every few seconds, in
/// the background of every server: whichever server takes the turn first writes, the others skip the
/// round. No request waits for it, and a failure only delays the next anchor.
struct AuditAnchoring: Service {
    /// Seconds between rounds: the longest a row stays unanchored while its server runs (the window
    /// in which deleting an account's newest rows shows only in its head record; docs/server.md).
    static let intervalSeconds = 5
    /// Anchors one round writes at most (each names up to ``AuditAnchorRecord/maximumChains`` chains).
    static let maximumAnchorsPerRound = 20

    let storage: any ServerStorage
    let now: @Sendable () async throws -> Int64
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                var written = 0
                while written < Self.maximumAnchorsPerRound, try await storage.writeAuditAnchor(at: try await now()) {
                    written += 1
                }
            } catch {
                logger.warning("audit anchor not written", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(Self.intervalSeconds)) }
        }
    }
}
