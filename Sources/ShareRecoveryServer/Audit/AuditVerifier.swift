#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
package import Logging
import ShareCrypto
package import ShareRecovery

/// An intact chain: how many rows, and its newest row (the anchor to keep for the next verification).
package struct AuditVerification: Sendable, Equatable {
    package let count: Int64
    package let head: AuditAnchor?
}

/// Reading a server database's audit trail from outside the server (`share-recovery audit`): nothing
/// is migrated or written.
package enum AuditTrail {
    /// Rows read per query while walking the chain.
    static let pageSize = 1_000

    /// Walks the whole chain of `storage` in sequence order.
    /// - Parameter anchors: Rows recorded from earlier verifications, which must still be there, unchanged.
    /// - Throws: ``AuditChainError`` for the first broken row.
    package static func verify(_ storage: any ServerStorage, anchors: [AuditAnchor] = []) async throws
        -> AuditVerification
    {
        guard try await storage.hasAuditTrail() else {
            throw AuditChainError(
                .noAuditTrail, sequence: 0,
                "the database has no audit_events table: it is not a share-recovery server database, or its server predates the audit trail (start a current server on it once)"
            )
        }
        var walk = AuditChainWalk(anchors: anchors)
        var after: Int64 = 0
        while true {
            let page = try await storage.auditChain(after: after, limit: pageSize)
            for row in page {
                switch walk.check(row) {
                case .intact: break
                case .broken(let error): throw error
                case .linkMismatch(let sequence, let previousHash):
                    let named = try await storage.auditSequence(ofHash: previousHash)
                    throw AuditChainWalk.linkError(sequence: sequence, namedRow: named)
                }
            }
            guard let last = page.last, page.count == pageSize else { break }
            after = last.sequence
        }
        if let error = walk.finish() { throw error }
        return AuditVerification(count: walk.count, head: walk.head)
    }

    /// One page of an account's events, oldest first, as the API and `audit list` show it:
    /// `{"events": [{"sequence", "time", "event", "requestId", "detail", "hash"}], "nextCursor"?}`.
    /// `nextCursor` (present when more events follow) is opaque to clients: 16 hex digits of the
    /// sequence the next page starts after.
    package static func page(_ storage: any ServerStorage, account: String, after: Int64, limit: Int) async throws
        -> JSONValue
    {
        // One row more than the page tells whether another page follows.
        let rows = try await storage.auditEvents(account: account, after: after, limit: limit + 1)
        let page = rows.prefix(limit)
        var members: [(key: String, value: JSONValue)] = [("events", .array(try page.map(json)))]
        if rows.count > limit, let last = page.last {
            let hex = String(UInt64(bitPattern: last.sequence), radix: 16)
            members.append(("nextCursor", .string(String(repeating: "0", count: 16 - hex.count) + hex)))
        }
        return .object(members)
    }

    static func json(_ row: AuditRow) throws -> JSONValue {
        guard let detail = try? StrictJSON.parse(Array(row.detail.utf8)), case .object = detail else {
            throw ShareRecoveryError(.storeCorrupted, "audit row \(row.sequence) has an unreadable detail")
        }
        return .object([
            ("sequence", .number(String(row.sequence))), ("time", .string(RFC3339.format(row.at))),
            ("event", .string(row.event)), ("requestId", .string(row.requestId)), ("detail", detail),
            ("hash", .string(Hex.encode(row.hash))),
        ])
    }

    /// Opens a server database for reading its audit trail, runs `body`, and closes it.
    /// - Parameter database: An SQLite path (which must exist) or a `postgres://` URL.
    /// - Throws: ``ServerStartError`` `databaseUnavailable` or `invalidConfiguration` when the database
    ///   cannot be opened or read, else what `body` throws.
    package static func withDatabase<Result: Sendable>(
        _ database: ServerConfiguration.Database, logger: Logger,
        _ body: (any ServerStorage) async throws -> Result
    ) async throws -> Result {
        let storage: any ServerStorage
        let name: String
        switch database {
        case .sqlite(let path):
            guard FileManager.default.fileExists(atPath: path) else {
                throw ServerStartError(.databaseUnavailable, "there is no SQLite database at \(path): check --database")
            }
            storage = try SQLiteStorage(path: path)
            name = path
        case .postgres(let url):
            let location = try PostgresLocation(url: url)
            // An operator's read of the whole trail is not cut off by the servers' statement timeout.
            var settings = PostgresSettings()
            settings.statementTimeoutSeconds = 0
            storage = PostgresStorage(location: location, settings: settings, logger: logger)
            name = "PostgreSQL at \(location.host):\(location.port)/\(location.database)"
        }
        do {
            _ = try await storage.hasAuditTrail()
        } catch {
            await storage.close()
            throw ServerStartError(
                .databaseUnavailable, "cannot read \(name): check that it is reachable and that the login is right")
        }
        do {
            let result = try await body(storage)
            await storage.close()
            return result
        } catch {
            await storage.close()
            throw error
        }
    }
}
