import ShareCrypto
import ShareRecovery

/// A row of `wallet_devices`: a device added to a wallet, and the custodian's share of its set.
struct StoredDevice: Sendable {
    let deviceId: String
    let setId: String
    let generation: UInt32
    /// The set of the device that approved it.
    let approvedBy: String
    /// The custodian's share of the device's set, sealed for the row.
    let sealedRecord: [UInt8]
    /// The plan, commitments and the sub-shares sealed to the device (public).
    let enrolmentJSON: String
    let createdAt: Int64
}

/// The wallet's added devices (docs/devices.md). Every change takes the lock of the user's signing
/// shares, so it serialises with a recovery (which drops them all) and with the signing check.
extension ServerStorage {
    func walletDevices(clientId: String) async throws -> [StoredDevice] {
        try await read { transaction in
            try await transaction.query(
                "SELECT * FROM wallet_devices WHERE client_id = ? ORDER BY created_at, device_id", .text(clientId)
            ).map(Self.storedDevice)
        }
    }

    func walletDevice(clientId: String, deviceId: String) async throws -> StoredDevice? {
        try await read { transaction in
            try await transaction.query(
                "SELECT * FROM wallet_devices WHERE client_id = ? AND device_id = ?", .text(clientId), .text(deviceId)
            ).first.map(Self.storedDevice)
        }
    }

    /// The device whose set is `setId`, if an added device's.
    func walletDevice(clientId: String, setId: String) async throws -> StoredDevice? {
        try await read { transaction in
            try await transaction.query(
                "SELECT * FROM wallet_devices WHERE client_id = ? AND set_id = ?", .text(clientId), .text(setId)
            ).first.map(Self.storedDevice)
        }
    }

    /// open → done for a device-add session, storing the custodian's share of the new device's set in
    /// the same transaction, with its `deviceAdded` row.
    /// - Returns: `false` when the session is no longer open.
    /// - Throws: `StorageRefusal` when the approving set is no longer current (removed, or a recovery
    ///   since), when the device id is taken, or when the wallet has `maximum` devices.
    func completeDeviceAdd(
        sessionId: String, clientId: String, device: StoredDevice, maximum: Int, now: Int64, added: AuditEvent
    ) async throws -> Bool {
        try await transaction { transaction in
            guard try await Self.advance(transaction, id: sessionId, now: now) else { return false }
            try await transaction.lock("signing shares \(clientId)")
            guard try await Self.currentSetIds(clientId: clientId, in: transaction).contains(device.approvedBy) else {
                throw StorageRefusal.approvingSetNotCurrent(setId: device.approvedBy)
            }
            try await WalletDeviceRules.checkRoom(
                clientId: clientId, deviceId: device.deviceId, maximum: maximum, in: transaction)
            try await transaction.query(
                """
                INSERT INTO wallet_devices
                    (client_id, device_id, set_id, generation, approved_by, sealed_record, enrolment_json, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                .text(clientId), .text(device.deviceId), .text(device.setId), .integer(Int64(device.generation)),
                .text(device.approvedBy), .blob(device.sealedRecord), .text(device.enrolmentJSON),
                .integer(device.createdAt))
            try await Self.appendAudit([added], in: transaction)
            return true
        }
    }

    /// Deletes an added device's row (the custodian's share of its set), spending the single-use
    /// token, with its `deviceRemoved` row.
    func removeWalletDevice(clientId: String, deviceId: String, token: Token, removed: AuditEvent) async throws
        -> SingleUseWrite
    {
        try await transaction { transaction in
            let spent = try await transaction.query(
                "SELECT token_id FROM spent_tokens WHERE token_id = ?", .text(token.id))
            guard spent.isEmpty else { return .tokenSpent }
            try await transaction.lock("signing shares \(clientId)")
            let deleted = try await transaction.query(
                "DELETE FROM wallet_devices WHERE client_id = ? AND device_id = ? RETURNING set_id", .text(clientId),
                .text(deviceId))
            guard let setId = try deleted.first?.text("set_id") else { return .notFound }
            // Its ECDSA pair setup with the custodian is bound to the set that stops signing.
            try await transaction.query(
                "DELETE FROM ecdsa_pair_setups WHERE client_id = ? AND set_id = ?", .text(clientId), .text(setId))
            guard try await Self.spend(token, in: transaction) else {
                throw StorageRefusal.tokenSpent
            }
            try await Self.appendAudit([removed], in: transaction)
            return .done
        }
    }

    /// Every set that signs for the user now: the primary set and each added device's.
    static func currentSetIds(clientId: String, in transaction: any SQLTransaction) async throws -> Set<String> {
        let rows = try await transaction.query(
            "SELECT set_id FROM signing_shares WHERE client_id = ? UNION SELECT set_id FROM wallet_devices WHERE client_id = ?",
            .text(clientId), .text(clientId))
        return Set(try rows.map { try $0.text("set_id") })
    }

    /// Drops every added device of a user: their sets were reshared from a set that stops signing.
    static func dropWalletDevices(clientId: String, in transaction: any SQLTransaction) async throws {
        try await transaction.query("DELETE FROM wallet_devices WHERE client_id = ?", .text(clientId))
    }

    private static func storedDevice(_ row: SQLRow) throws -> StoredDevice {
        StoredDevice(
            deviceId: try row.text("device_id"), setId: try row.text("set_id"),
            generation: UInt32(truncatingIfNeeded: try row.integer("generation")),
            approvedBy: try row.text("approved_by"),
            sealedRecord: try row.blob("sealed_record"), enrolmentJSON: try row.text("enrolment_json"),
            createdAt: try row.integer("created_at"))
    }
}

/// The rules every device change checks, in the caller's transaction.
enum WalletDeviceRules {
    /// The device that created or recovered the wallet: its set lives in `signing_shares`.
    static let primaryDeviceId = "primary"

    /// Refuses a device id in use and a wallet at its limit (the primary device counts).
    /// - Throws: `StorageRefusal.deviceIdTaken` or `.deviceLimitReached`.
    static func checkRoom(clientId: String, deviceId: String, maximum: Int, in transaction: any SQLTransaction)
        async throws
    {
        let taken = try await transaction.query(
            "SELECT device_id FROM wallet_devices WHERE client_id = ?", .text(clientId)
        ).map { try $0.text("device_id") }
        guard deviceId != WalletDeviceRules.primaryDeviceId, !taken.contains(deviceId) else {
            throw StorageRefusal.deviceIdTaken(deviceId: deviceId)
        }
        let primary = try await transaction.query(
            "SELECT set_id FROM signing_shares WHERE client_id = ?", .text(clientId))
        let count = taken.count + (primary.isEmpty ? 0 : 1)
        guard count < maximum else {
            throw StorageRefusal.deviceLimitReached(devices: count)
        }
    }
}
