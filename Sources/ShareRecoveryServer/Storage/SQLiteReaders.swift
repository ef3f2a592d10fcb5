#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import GRDB
import ShareCrypto

/// The read-only connections that serve ``ServerStorage/read(_:)`` on SQLite, taken in turn.
///
/// Why not the pool's readers: GRDB's `DatabasePool` checks a reader out of its pool for every read
/// and first runs `PRAGMA schema_version` on it (to refresh its schema cache, which the server's plain
/// SQL never uses), so every one-statement read cost two statements, two read transactions and the
/// pool's checkout. A plain SELECT through it cost about as much server CPU as the whole audited
/// write transaction of a cipherText GET (docs/server.md, "Throughput"). A read here is its statement
/// alone, on a connection opened read-only, on the calling thread.
///
/// There are more connections than cooperative threads, so a read rarely finds its connection busy
/// (it would then wait for a statement, not a transaction: a read is one statement). A WAL reader
/// never waits for the writer. The schema is migrated before the server serves, and SQLite prepares a
/// cached statement again by itself if the schema did change.
final class SQLiteReaders: Sendable {
    private let connections: [DatabaseQueue]
    private let turn = Locked(0)

    /// More than cooperative threads, so a synchronous read seldom finds its connection busy.
    static var count: Int { max(5, ProcessInfo.processInfo.activeProcessorCount + 1) }

    init(path: String, count: Int = SQLiteReaders.count) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(30)
        configuration.label = "share-recovery-server.reader"
        connections = try (0..<max(1, count)).map { _ in try DatabaseQueue(path: path, configuration: configuration) }
    }

    /// The next connection in turn.
    func next() -> DatabaseQueue {
        connections[
            turn.withLock { turn in
                defer { turn = (turn + 1) % connections.count }
                return turn
            }]
    }

    func close() {
        for connection in connections { try? connection.close() }
    }
}
