import ShareCrypto
import ShareRecovery

/// How an eject's transaction ended (``ServerStorage/ejectWallet(clientId:walletId:setId:publicKey:token:event:)``).
enum EjectOutcome: Sendable, Equatable {
    /// The wallet is marked ejected, the custodian's share deleted, the token spent, the row appended.
    case ejected
    /// The token was spent by an earlier request.
    case tokenSpent
    /// The custodian's signing set changed since the share was read (a recovery ran meanwhile).
    case setChanged
    /// The wallet was ejected already.
    case alreadyEjected
}

/// Eject's rows (docs/eject.md): `ejected_wallets`, and the deletion of the custodian's signing share.
extension ServerStorage {
    /// Marks the wallet ejected, in one transaction under the user's signing-share lock: spends the
    /// single-use `eject` token, deletes the custodian's signing shares of the user (its added devices'
    /// sets included) and the user's open signing sessions (their nonces), writes the `ejected_wallets` row and appends `walletEjected`.
    func ejectWallet(
        clientId: String, walletId: String, setId: String, publicKey: String, token: Token, event: AuditEvent
    ) async throws -> EjectOutcome {
        try await transaction { transaction in
            try await transaction.lock("signing shares \(clientId)")
            let spent = try await transaction.query(
                "SELECT token_id FROM spent_tokens WHERE token_id = ?", .text(token.id))
            guard spent.isEmpty else { return .tokenSpent }
            guard try await Self.isEjected(clientId: clientId, walletId: walletId, in: transaction) == false else {
                return .alreadyEjected
            }
            guard try await Self.currentSetIds(clientId: clientId, in: transaction).contains(setId) else {
                return .setChanged
            }
            guard try await Self.spend(token, in: transaction) else { return .tokenSpent }
            try await transaction.query("DELETE FROM signing_shares WHERE client_id = ?", .text(clientId))
            // The added devices' sets (docs/devices.md) go too: the key they share has left.
            try await Self.dropWalletDevices(clientId: clientId, in: transaction)
            // ECDSA with the custodian ends with its share: its pair setups and unfinished sessions go.
            try await Self.dropPairSetups(clientId: clientId, in: transaction)
            try await transaction.query(
                "DELETE FROM protocol_sessions WHERE client_id = ? AND protocol IN (?, ?)", .text(clientId),
                .text(ProtocolSessionRecord.Kind.ecdsaPairSetup.rawValue),
                .text(ProtocolSessionRecord.Kind.ecdsaSigning.rawValue))
            try await transaction.query(
                "DELETE FROM protocol_sessions WHERE client_id = ? AND protocol = ? AND state = ?", .text(clientId),
                .text(ProtocolSessionRecord.Kind.signing.rawValue), .text(ProtocolSessionRecord.State.open.rawValue))
            try await transaction.query(
                "INSERT INTO ejected_wallets (client_id, wallet_id, set_id, public_key, ejected_at) VALUES (?, ?, ?, ?, ?)",
                .text(clientId), .text(walletId), .text(setId), .text(publicKey), .integer(event.at))
            try await Self.appendAudit([event], in: transaction)
            return .ejected
        }
    }

    /// Whether the user's wallet of this id was ejected.
    func isEjected(clientId: String, walletId: String) async throws -> Bool {
        try await read { transaction in
            try await Self.isEjected(clientId: clientId, walletId: walletId, in: transaction)
        }
    }

    /// Whether the user's wallet of this id was ejected, inside a transaction.
    static func isEjected(clientId: String, walletId: String, in transaction: any SQLTransaction) async throws -> Bool {
        try await !transaction.query(
            "SELECT wallet_id FROM ejected_wallets WHERE client_id = ? AND wallet_id = ?", .text(clientId),
            .text(walletId)
        ).isEmpty
    }
}
