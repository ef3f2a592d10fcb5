import ShareRecovery

/// A column that holds values sealed under the master key (``AtRestSealer``), with what `keys rotate`
/// needs to re-seal one in place: the row's primary key, and the AAD row the server seals it for.
struct SealedColumn: Sendable {
    let table: String
    let column: String
    /// The primary key's columns, in the order rows are walked.
    let keyColumns: [String]
    /// Further columns the AAD row is made of.
    let otherColumns: [String]
    /// The AAD row of a selected row (the `row` its value was sealed for).
    let aadRow: @Sendable (SQLRow) throws -> [String]

    /// Every sealed column of the schema. A migration that adds one adds it here too, or `keys rotate`
    /// would leave its values under the old key (`MasterKeyRotationTests` checks the schema against this list).
    static let all: [SealedColumn] = [
        SealedColumn(table: "server_keys", column: "sealed_secret", keyColumns: ["name"], otherColumns: []) {
            [try $0.text("name")]
        },
        SealedColumn(
            table: "signing_shares", column: "sealed_record", keyColumns: ["client_id", "party_index"],
            otherColumns: ["set_id"]
        ) { [try $0.text("client_id"), String(try $0.integer("party_index")), try $0.text("set_id")] },
        SealedColumn(
            table: "wallet_devices", column: "sealed_record", keyColumns: ["client_id", "device_id"],
            otherColumns: ["set_id"]
        ) { [try $0.text("client_id"), try $0.text("device_id"), try $0.text("set_id")] },
        SealedColumn(
            table: "ecdsa_pair_setups", column: "sealed_setup", keyColumns: ["client_id", "set_id"],
            otherColumns: ["generation"]
        ) { [try $0.text("client_id"), try $0.text("set_id"), String(try $0.integer("generation"))] },
        SealedColumn(
            table: "protocol_sessions", column: "sealed_state", keyColumns: ["id"], otherColumns: ["protocol", "state"]
        ) { row in
            guard let kind = ProtocolSessionRecord.Kind(rawValue: try row.text("protocol")) else {
                throw ShareRecoveryError(.storageFailure, "unknown protocol session kind")
            }
            // A finished resharing session keeps its pending result, sealed for that label
            // (CustodianSessions.swift); every other state keeps the kind's.
            let state = try row.text("state")
            let label =
                kind == .resharing && state == ProtocolSessionRecord.State.finished.rawValue
                ? "pending" : kind.sealedStateLabel
            return [try row.text("id"), label]
        },
        SealedColumn(
            table: "idempotency_keys", column: "sealed_body", keyColumns: ["scope", "idempotency_key"],
            otherColumns: []
        ) { [try $0.text("scope"), try $0.text("idempotency_key")] },
    ]

    /// Up to `limit` rows with a value, after the row whose key is `after` (all from the first when `nil`),
    /// in key order: a walk that new rows and re-sealed ones do not disturb.
    func page(after: [SQLValue]?, limit: Int, in transaction: any SQLTransaction) async throws -> [SQLRow] {
        let columns = (keyColumns + otherColumns + [column]).joined(separator: ", ")
        let key = keyColumns.joined(separator: ", ")
        var sql = "SELECT \(columns) FROM \(table) WHERE \(column) IS NOT NULL"
        if after != nil {
            sql += " AND (\(key)) > (\(keyColumns.map { _ in "?" }.joined(separator: ", ")))"
        }
        sql += " ORDER BY \(key) LIMIT \(limit)"
        return try await transaction.query(sql, after ?? [])
    }

    /// The row's primary key values, in ``keyColumns`` order.
    func key(of row: SQLRow) -> [SQLValue] { keyColumns.map { row.columns[$0] ?? .null } }

    /// Replaces the row's value with `resealed` if it still holds `sealed` (a server may have changed it
    /// meanwhile: then its own write stands). One statement, its own transaction.
    /// - Returns: Whether the row was changed.
    func replace(
        _ sealed: [UInt8], with resealed: [UInt8], key: [SQLValue], in transaction: any SQLTransaction
    ) async throws -> Bool {
        let match = keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")
        return try await !transaction.query(
            "UPDATE \(table) SET \(column) = ? WHERE \(match) AND \(column) = ? RETURNING \(keyColumns[0])",
            [.blob(resealed)] + key + [.blob(sealed)]
        ).isEmpty
    }

    /// A printable name of a row (its primary key; no key column holds a secret).
    func describe(_ key: [SQLValue]) -> String {
        zip(keyColumns, key).map { name, value in
            switch value {
            case .text(let text): "\(name) \(text)"
            case .integer(let number): "\(name) \(number)"
            case .blob, .null: name
            }
        }.joined(separator: ", ")
    }
}
