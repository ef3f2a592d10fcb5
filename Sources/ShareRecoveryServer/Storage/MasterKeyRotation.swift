#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging
import ShareCrypto
import ShareRecovery

/// What `share-recovery keys rotate` did (docs/server.md, "Rotating the master key").
public struct MasterKeyRotationResult: Sendable, Equatable {
    /// One sealed column's counts.
    public struct Table: Sendable, Equatable {
        /// The table.
        public let table: String
        /// Values re-sealed under the first master key now.
        public var resealed = 0
        /// Values a server changed while they were being re-sealed (its own write stands).
        public var changedMeanwhile = 0
        /// Values found afterwards under another key than the first (0 once the rotation is complete).
        public var remaining = 0
        /// Values found afterwards, all of which opened.
        public var values = 0
    }

    /// The key id of the key everything is sealed under now: the file's first.
    public let keyId: String
    /// How many master keys the file holds.
    public let keys: Int
    /// Per sealed table, in schema order.
    public let tables: [Table]

    /// Values re-sealed now, all tables.
    public var resealed: Int { tables.reduce(0) { $0 + $1.resealed } }
    /// Values under another key than the first afterwards, all tables: 0 once the old keys may go.
    public var remaining: Int { tables.reduce(0) { $0 + $1.remaining } }
}

/// Why `keys rotate` stopped: stable codes, a reason naming the table, row and key id (never a key).
public struct MasterKeyRotationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Sendable {
        /// A value is sealed under a master key the file does not hold: add that key back as a line.
        case unknownMasterKey
        /// A value names a key the file holds, or none, and still does not open: tampered with, moved
        /// between rows, or written by another deployment.
        case sealedValueUnreadable
        /// Values remain under an old key after the walk: a server still seals under it (its file does
        /// not have the new key first), or it wrote while the walk passed. Fix that, run again.
        case rotationIncomplete
    }

    /// The stable code.
    public let code: Code
    /// What happened and what to do.
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - reason: What happened and what to do.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Errors compare by code.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String { "\(code.rawValue): \(reason)" }
}

/// Re-seals every value sealed under the master key whose key is not the first of `masterKey`'s file
/// (a legacy value without a key id included) under the first, beside running servers: rows are walked
/// a page at a time in key order, and each value is replaced by a statement of its own only if it is
/// still the value read, so a server's concurrent write stands and an interrupted run is resumed by
/// running it again. A second walk then counts what remains under another key.
/// - Parameters:
///   - database: The SQLite path (which must exist) or PostgreSQL URL of a database migrated by this build.
///   - masterKey: The master key file: the new key first, every key values may be sealed under after it.
///   - postgres: With PostgreSQL, the password, TLS and timeouts (the pool is two connections' worth).
///   - pageSize: Rows read at a time.
///   - logger: Where the driver logs.
///   - resealed: Called after each value re-sealed, with its table (a progress report; what it throws
///     stops the run, which is then resumed by running it again).
/// - Returns: The counts per table.
/// - Throws: ``MasterKeyRotationError`` `unknownMasterKey` or `sealedValueUnreadable` for a value that
///   does not open (nothing further is changed); ``ServerStartError`` when the key file or the database
///   cannot be used (`invalidConfiguration`, `databaseUnavailable`, `databaseNotMigrated`,
///   `schemaNewerThanBuild`).
public func rotateMasterKey(
    _ database: ServerConfiguration.Database, masterKey: ServerConfiguration.SecretSource,
    postgres: PostgresSettings = PostgresSettings(), pageSize: Int = 200, logger: Logger,
    resealed: @escaping @Sendable (String) throws -> Void = { _ in }
) async throws -> MasterKeyRotationResult {
    if case .generatedFile = masterKey {
        throw ServerStartError(.invalidConfiguration, "keys rotate reads the master key file; it never creates one")
    }
    let keys = try SecretLoading.masterKeys(masterKey).map { key throws(ServerStartError) in
        try DerivedKeys(masterKey: key)
    }
    let storage: any ServerStorage
    switch database {
    case .sqlite(let path):
        guard FileManager.default.fileExists(atPath: path) else {
            throw ServerStartError(.databaseUnavailable, "there is no SQLite database at \(path): check --database")
        }
        storage = try SQLiteStorage(path: path)
    case .postgres(let url):
        var settings = postgres
        // One connection walks, one writes; the servers keep the rest of the database's connections.
        settings.poolSize = 2
        storage = PostgresStorage(
            location: try settings.applied(to: try PostgresLocation(url: url)), settings: settings, logger: logger)
    }
    do {
        let result = try await MasterKeyRotator(
            storage: storage, sealer: AtRestSealer(keys: keys), keyCount: keys.count, pageSize: pageSize,
            resealed: resealed
        ).run()
        await storage.close()
        return result
    } catch {
        await storage.close()
        throw error
    }
}

/// The walk of ``rotateMasterKey(_:masterKey:postgres:pageSize:logger:resealed:)`` over an open storage.
struct MasterKeyRotator: Sendable {
    let storage: any ServerStorage
    let sealer: AtRestSealer
    let keyCount: Int
    let pageSize: Int
    let resealed: @Sendable (String) throws -> Void

    func run() async throws -> MasterKeyRotationResult {
        let dialect = storage.dialect
        switch try await storage.read({ try await Migrations.state(in: $0, dialect: dialect) }) {
        case .current: break
        case .behind(let missing):
            throw ServerStartError(
                .databaseNotMigrated,
                "the database lacks \(missing) migration(s) of this build: run `share-recovery migrate` first")
        case .newer(let versions):
            // A newer release may seal in a column this build does not know of.
            throw ServerStartError(
                .schemaNewerThanBuild,
                "the database has migration(s) \(versions.map(String.init).joined(separator: ", ")) of a newer release: run that release's `keys rotate`"
            )
        }
        var tables: [MasterKeyRotationResult.Table] = []
        for column in SealedColumn.all {
            var counts = MasterKeyRotationResult.Table(table: column.table)
            try await walk(column) { key, sealed, opened, row in
                guard opened.layout != .keyed(index: 0) else { return }
                let fresh = try sealer.seal(opened.plaintext, table: column.table, row: row)
                let changed = try await storage.statementTransaction { transaction in
                    try await column.replace(sealed, with: fresh, key: key, in: transaction)
                }
                if changed {
                    counts.resealed += 1
                    try resealed(column.table)
                } else {
                    counts.changedMeanwhile += 1
                }
            }
            try await walk(column) { _, _, opened, _ in
                counts.values += 1
                if opened.layout != .keyed(index: 0) { counts.remaining += 1 }
            }
            tables.append(counts)
        }
        return MasterKeyRotationResult(
            keyId: Hex.encode(sealer.sealingKeyId), keys: keyCount, tables: tables)
    }

    /// Calls `body` with each row's key, sealed value, opened value and AAD row, a page at a time.
    private func walk(
        _ column: SealedColumn,
        _ body: ([SQLValue], [UInt8], (plaintext: SecureBytes, layout: AtRestSealer.Layout), [String]) async throws
            -> Void
    ) async throws {
        var after: [SQLValue]?
        while true {
            let page = try await storage.read { [after, pageSize] transaction in
                try await column.page(after: after, limit: pageSize, in: transaction)
            }
            for row in page {
                let key = column.key(of: row)
                let sealed = try row.blob(column.column)
                // A finished session keeps no secret: an empty value.
                if sealed.isEmpty { continue }
                let aadRow = try column.aadRow(row)
                try await body(key, sealed, try open(sealed, column: column, key: key, row: aadRow), aadRow)
            }
            guard page.count == pageSize, let last = page.last else { return }
            after = column.key(of: last)
        }
    }

    /// Opens a value, or names the row and key id it does not open under.
    private func open(_ sealed: [UInt8], column: SealedColumn, key: [SQLValue], row: [String]) throws
        -> (plaintext: SecureBytes, layout: AtRestSealer.Layout)
    {
        do {
            return try sealer.opening(sealed, table: column.table, row: row)
        } catch {
            let keyId = AtRestSealer.keyId(of: sealed)
            let named = keyId.map { Hex.encode($0) }
            if let keyId, let named, !sealer.holds(keyId: keyId) {
                throw MasterKeyRotationError(
                    .unknownMasterKey,
                    "\(column.table) (\(column.describe(key))) is sealed under master key id \(named), which the master key file does not hold: add that key back as a line after the first, then run again"
                )
            }
            guard let named else {
                throw MasterKeyRotationError(
                    .sealedValueUnreadable,
                    "\(column.table) (\(column.describe(key))) was sealed before key ids and opens under no key of the master key file: add the key it was sealed under as a line after the first and run again; if the file holds it, the row was changed or moved: restore it from a backup or delete it"
                )
            }
            throw MasterKeyRotationError(
                .sealedValueUnreadable,
                "\(column.table) (\(column.describe(key))) names master key id \(named), which the file holds, and does not open under it: the row was changed, moved between rows or written by another deployment; restore it from a backup or delete it"
            )
        }
    }
}
