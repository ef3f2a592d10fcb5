import ShareCrypto
import ShareRecovery

/// What deleting a resharing session did.
enum SessionDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// The session was confirmed: its new set is current, and there is nothing left to abandon.
    case confirmed
}

/// Resharing sessions of the custodian role (docs/formats.md §3), in the one session store.
extension ServerStorage {
    /// open → finished, storing the pending shares; `false` when the session is no longer open.
    func finishSession(id: String, sealedPending: [UInt8]?, now: Int64) async throws -> Bool {
        try await transaction { transaction in
            try await Self.advance(
                transaction, id: id, from: .open, to: .finished, sealedState: sealedPending ?? [], now: now)
        }
    }

    /// Commits a finished session: for a recovery or a refresh the new signing set replaces the old one,
    /// if `confirming` (the role's rule) accepts the setIds of the current one, read under the client's
    /// lock. A recovery drops the added devices and every ECDSA pair setup; a refresh (`keepingDevices`)
    /// only the pair setups bound to the set it replaced. Confirming a confirmed session is done already
    /// (and `completed`, its audit row, is not appended again). The row stays, as done and without its
    /// sealed state, until `retainUntil`.
    func confirmSession(
        id: String, newShares: [SealedSigningShare]?, keepingDevices: Bool = false, now: Int64, retainUntil: Int64,
        completed: AuditEvent,
        confirming: @escaping @Sendable ([SetID]) throws -> Void
    ) async throws -> SingleUseWrite {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT * FROM protocol_sessions WHERE id = ? AND protocol = 'resharing' AND expires_at > ?\(forUpdate)",
                    .text(id), .integer(now)
                ).first
            else { return .notFound }
            let session = try Self.protocolSessionRecord(row)
            if session.state == .done { return .done }
            guard session.state == .finished else { throw StorageRefusal.sessionNotFinished }
            if let newShares {
                try await transaction.lock("signing shares \(session.clientId)")
                let current = try await transaction.query(
                    "SELECT DISTINCT set_id FROM signing_shares WHERE client_id = ?", .text(session.clientId)
                ).map { row in
                    guard let bytes = Hex.decode(try row.text("set_id")), let setId = try? SetID(bytes: bytes) else {
                        throw ShareRecoveryError(.storeCorrupted, "a signing share's set_id is not a setId")
                    }
                    return setId
                }
                try confirming(current)
                try await transaction.query("DELETE FROM signing_shares WHERE client_id = ?", .text(session.clientId))
                if keepingDevices {
                    // A refresh: the other devices' sets sign on; only the refreshed set's setups end.
                    for setId in current {
                        try await Self.dropPairSetup(clientId: session.clientId, setId: setId.hex, in: transaction)
                    }
                } else {
                    // Added devices were reshared from sets that stop signing now (docs/devices.md).
                    try await Self.dropWalletDevices(clientId: session.clientId, in: transaction)
                    // ECDSA pair setups are bound to the sets that stop signing (docs/ecdsa.md).
                    try await Self.dropPairSetups(clientId: session.clientId, in: transaction)
                }
                for share in newShares {
                    try await transaction.query(
                        "INSERT INTO signing_shares (client_id, party_index, set_id, generation, sealed_record, stored_at) VALUES (?, ?, ?, ?, ?, ?)",
                        .text(session.clientId), .integer(Int64(share.partyIndex)), .text(share.setId),
                        .integer(Int64(share.generation)), .blob(share.sealedRecord), .integer(now))
                }
            }
            // Kept answerable long after its lifetime: a device that was cut off learns it was confirmed.
            guard
                try await Self.advance(
                    transaction, id: id, from: .finished, to: .done, now: now, expiresAt: max(retainUntil, now))
            else { throw StorageRefusal.sessionChangedDuringConfirm }
            try await Self.appendAudit([completed], in: transaction)
            return .done
        }
    }

    /// Deletes an open or finished session, with its audit row `aborted`; a confirmed one stays.
    func deleteSession(id: String, aborted: AuditEvent) async throws -> SessionDeletion {
        let forUpdate = self.forUpdate
        return try await transaction { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT state FROM protocol_sessions WHERE id = ? AND protocol = 'resharing'\(forUpdate)", .text(id)
                ).first
            else { return .notFound }
            if try row.text("state") == ProtocolSessionRecord.State.done.rawValue { return .confirmed }
            try await transaction.query("DELETE FROM protocol_sessions WHERE id = ?", .text(id))
            try await Self.appendAudit([aborted], in: transaction)
            return .deleted
        }
    }
}
