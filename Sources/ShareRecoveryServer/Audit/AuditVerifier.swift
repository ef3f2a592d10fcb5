#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
package import Logging
import ShareCrypto
package import ShareRecovery

/// An intact trail: how many rows and chains, and its newest anchor (the value to keep for the next
/// verification).
package struct AuditVerification: Sendable, Equatable {
    /// Audit rows, in every chain.
    package let count: Int64
    /// Account chains (the server's own events count as one).
    package let chains: Int
    /// Anchor rows.
    package let anchors: Int64
    /// Rows newer than their chain's newest anchored row: between anchors, only the chains' head
    /// records vouch that none of these was deleted (docs/server.md, "What verify detects").
    package let unanchored: Int64
    /// The newest anchor (`anchor:<sequence>:<hash>`); on a database without the per-account chains,
    /// the newest row of its single chain; `nil` when there is neither.
    package let head: AuditAnchor?
}

/// Reading a server database's audit trail from outside the server (`share-recovery audit`): nothing
/// is migrated or written.
package enum AuditTrail {
    /// Rows read per query while walking the chains.
    static let pageSize = 1_000

    /// Walks the anchors, the chain written before the per-account chains, and every account's chain,
    /// and checks each chain's end against its newest anchor and its head record.
    /// - Parameter anchors: Anchors (or rows of the single chain) recorded from earlier verifications,
    ///   which must still be there, unchanged.
    /// - Throws: ``AuditChainError`` for the first broken row found.
    package static func verify(_ storage: any ServerStorage, anchors: [AuditAnchor] = []) async throws
        -> AuditVerification
    {
        guard try await storage.hasAuditTrail() else {
            throw AuditChainError(
                .noAuditTrail, sequence: 0,
                "the database has no audit_events table: it is not a share-recovery server database, or its server predates the audit trail (start a current server on it once)"
            )
        }
        let external = Dictionary(grouping: anchors, by: \.chain)
        guard try await storage.hasAuditChains() else {
            // A database of a release before the per-account chains: its one chain, as that release verified it.
            let legacy = try await walkLegacy(storage, anchors: external[.legacy] ?? [], onlyChain: true)
            return AuditVerification(count: legacy.count, chains: 0, anchors: 0, unanchored: 0, head: legacy.head)
        }
        var anchorWalk = AuditChainWalk(
            chain: .anchors, anchors: external[.anchors] ?? [], expectedHash: AuditAnchorRecord.expectedHash(of:))
        var anchoredLegacy: [AuditAnchor] = []
        var anchored: [String: AuditAnchor] = [:]
        try await walk(
            &anchorWalk, storage, pages: { try await storage.auditAnchors(after: $0?.sequence ?? 0, limit: $1) }
        ) {
            row in
            guard let record = AuditAnchorRecord(text: row.detail) else {
                throw AuditChainError(
                    .rowEdited, chain: .anchors, sequence: row.sequence,
                    "anchor \(row.sequence)'s heads are unreadable: it was rewritten (with its hash recomputed)")
            }
            if let legacy = record.legacy { anchoredLegacy.append(legacy) }
            for head in record.chains {
                anchored[head.account] = AuditAnchor(
                    chain: .account(head.account), sequence: head.position, hash: head.hash)
            }
        }
        // The anchors end where their head says (the newest anchor deleted shows here, unless rewound too).
        try checkHead(anchorWalk, record: try await storage.auditAnchorHead())
        let legacy = try await walkLegacy(
            storage, anchors: (external[.legacy] ?? []) + anchoredLegacy, onlyChain: false)
        let accounts = try await walkAccounts(storage, anchored: anchored)
        return AuditVerification(
            count: legacy.count + accounts.rows, chains: accounts.chains, anchors: anchorWalk.count,
            unanchored: accounts.unanchored, head: anchorWalk.head)
    }

    /// Walks the single chain written before the per-account chains (`onlyChain`: the database has
    /// no other, and no `chain_position` column).
    private static func walkLegacy(_ storage: any ServerStorage, anchors: [AuditAnchor], onlyChain: Bool)
        async throws -> AuditChainWalk
    {
        var legacy = AuditChainWalk(chain: .legacy, anchors: anchors)
        try await walk(&legacy, storage) { last, limit in
            try await storage.legacyAuditChain(after: last?.sequence ?? 0, limit: limit, chains: !onlyChain)
        } intact: { _ in
        }
        return legacy
    }

    /// Feeds `chain` its rows page by page (`pages` gets the last row read and a page size), calling
    /// `intact` for each row that checks, then checks the anchors beyond its end.
    private static func walk(
        _ chain: inout AuditChainWalk, _ storage: any ServerStorage,
        pages: (AuditRow?, Int) async throws -> [AuditRow], intact: (AuditRow) throws -> Void
    ) async throws {
        var last: AuditRow?
        while true {
            let page = try await pages(last, pageSize)
            for row in page { try await check(row, in: &chain, storage); try intact(row) }
            guard let newest = page.last, page.count == pageSize else { break }
            last = newest
        }
        if let error = chain.finish() { throw error }
    }

    /// One row's step, its link mismatch resolved by a look-up.
    private static func check(_ row: AuditRow, in chain: inout AuditChainWalk, _ storage: any ServerStorage)
        async throws
    {
        switch chain.check(row) {
        case .intact: return
        case .broken(let error): throw error
        case .linkMismatch(let sequence, let previousHash):
            let named = try await storage.auditNumber(ofHash: previousHash, in: chain.chain)
            throw chain.linkError(sequence: sequence, namedRow: named)
        }
    }

    /// Walks every account's chain in account order; each must reach its newest anchored row and end
    /// where its head record says.
    private static func walkAccounts(_ storage: any ServerStorage, anchored: [String: AuditAnchor]) async throws
        -> (rows: Int64, chains: Int, unanchored: Int64)
    {
        let heads = try await storage.auditChainHeads()
        var seen = Set<String>()
        var rows: Int64 = 0
        var unanchored: Int64 = 0
        var current: AuditChainWalk?
        func end(_ chain: AuditChainWalk) throws {
            guard case .account(let account) = chain.chain else { return }
            if let error = chain.finish() { throw error }
            try checkHead(chain, record: heads[account])
            rows += chain.count
            unanchored += chain.count - (anchored[account]?.sequence ?? 0)
        }
        var last: AuditRow?
        while true {
            let page = try await storage.accountAuditChains(
                after: last?.account ?? "", position: last?.position ?? 0, limit: pageSize)
            for row in page {
                if current?.chain != .account(row.account) {
                    if let current { try end(current) }
                    seen.insert(row.account)
                    current = AuditChainWalk(
                        chain: .account(row.account), anchors: anchored[row.account].map { [$0] } ?? [])
                }
                try await check(row, in: &current!, storage)
            }
            guard let newest = page.last, page.count == pageSize else { break }
            last = newest
        }
        if let current { try end(current) }
        // Chains of which every row is gone.
        for (account, anchor) in anchored.sorted(by: { $0.key < $1.key }) where !seen.contains(account) {
            throw AuditChainError(
                .anchorMismatch, chain: anchor.chain, sequence: anchor.sequence,
                "\(anchor.chain) has no rows, but \(anchor.chain.row(anchor.sequence)) was anchored: the whole chain was deleted"
            )
        }
        for (account, head) in heads.sorted(by: { $0.key < $1.key }) where !seen.contains(account) {
            throw AuditChainError(
                .headMismatch, chain: head.chain, sequence: head.sequence,
                "\(head.chain) has no rows, but its head record names \(head.chain.row(head.sequence)): the whole chain was deleted"
            )
        }
        return (rows, seen.count, unanchored)
    }

    /// A chain's end against its head record: rows deleted after the newest anchor show here (unless
    /// the head record was rewritten too: docs/server.md, "What verify detects").
    private static func checkHead(_ chain: AuditChainWalk, record: AuditAnchor?) throws {
        let name = chain.chain
        let end = chain.head?.sequence ?? 0
        // The anchors' head starts at 0, with no anchor.
        if name == .anchors, record?.sequence == 0, end == 0 { return }
        guard let record else {
            throw AuditChainError(
                .headMismatch, chain: name, sequence: end,
                "\(name) ends at \(name.row(end)) but has no head record: the head record was deleted")
        }
        if record.sequence > end {
            throw AuditChainError(
                .headMismatch, chain: name, sequence: end + 1,
                "\(name) ends at \(name.row(end)), but its head record names \(name.row(record.sequence)): \(name.rows(end + 1, record.sequence)) were deleted"
            )
        }
        guard record.sequence == end, record.hash == chain.head?.hash else {
            throw AuditChainError(
                .headMismatch, chain: name, sequence: record.sequence,
                "\(name)'s head record names \(name.row(record.sequence)) with another hash than the chain's end, \(name.row(end)): the newest rows were rewritten, or the head record edited"
            )
        }
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
