import HTTPTypes
import ShareCrypto
import ShareRecovery

/// Eject (docs/eject.md): the custodian releases its signing share of a wallet once, sealed to the
/// device, so that the device can rebuild the full private key; afterwards it signs for the wallet
/// no more. The key itself is never rebuilt here: only the device combines the two shares.
extension WalletSessions {
    /// Releases the custodian's signing share x_2 sealed to `clientKey`, and in the same transaction
    /// spends the token, deletes the custodian's share, marks the wallet ejected and appends
    /// `walletEjected`. `deviceSetId` must be a current set: the primary device's or an added device's. A retried request with the same `Idempotency-Key` gets the same answer.
    /// - Returns: The 200 body: `walletId`, `curve`, `publicKey`, `setId`, `generation`, `partyIndex`,
    ///   `sealedShare` (x_2, 32 bytes, sealed to `clientKey`).
    /// - Throws: 409 `walletEjected` for a wallet ejected before; 404 `noMatchingShare` when the
    ///   custodian holds no share of it; 409 `conflict` for a spent token or a set that changed.
    func eject(
        clientId: String, walletId: String, deviceSetId: String, clientKey: [UInt8], token: Token, origin: AuditOrigin
    ) async throws -> JSONValue {
        try await refuseEjected(clientId: clientId, walletId: walletId)
        let primary = try await currentShare(clientId: clientId, walletId: walletId)
        // The primary device's set or an added device's (docs/devices.md): either rebuilds the key.
        // Refused before anything changes: a device share of an older or removed set could not.
        guard let share = try await signingShare(primary, clientId: clientId, setId: deviceSetId) else {
            throw APIError.conflict(
                "the device's share is of set \(deviceSetId.prefix(32)), which no longer signs (the wallet now signs with set \(primary.setId) generation \(primary.generation) and its devices' sets): eject with a current share"
            )
        }
        guard let secret = share.secret else {
            throw ShareRecoveryError(.storeCorrupted, "the custodian's signing share has no secret")
        }
        let sealed = try checkingClientInput { try SealedBox.seal(secret.rawRepresentation, to: clientKey) }
        let event = origin.event(.walletEjected, account: clientId) {
            $0.walletId = walletId
            $0.setId = share.setId.hex
            $0.generation = share.generation
        }
        let outcome = try await state.storage.ejectWallet(
            clientId: clientId, walletId: walletId, setId: share.setId.hex, publicKey: share.publicKey.hex,
            token: token, event: event)
        switch outcome {
        case .ejected: break
        case .alreadyEjected: throw Self.ejected(walletId)
        case .tokenSpent: throw APIError.conflict("this eject token was used already; run the eject flow again")
        case .setChanged: throw APIError.conflict("the custodian's signing set changed during the eject; run it again")
        }
        return .object([
            ("walletId", .string(walletId)), ("curve", .string(share.curve.name)),
            ("publicKey", .string(share.publicKey.hex)),
            ("setId", .string(share.setId.hex)), ("generation", .number(String(share.generation))),
            ("partyIndex", .number(String(share.partyIndex))), ("sealedShare", .string(Base64.encode(sealed))),
        ])
    }

    /// Throws 409 `walletEjected` when the user's wallet of this id was ejected.
    func refuseEjected(clientId: String, walletId: String) async throws {
        if try await state.storage.isEjected(clientId: clientId, walletId: walletId) { throw Self.ejected(walletId) }
    }

    static func ejected(_ walletId: String) -> APIError {
        APIError(
            .conflict, APIErrorCode(.walletEjected),
            "wallet \(walletId) was ejected: its key was exported and the custodian no longer signs for it; sign with the exported key in another wallet"
        )
    }
}
