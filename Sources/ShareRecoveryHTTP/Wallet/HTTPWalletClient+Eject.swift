public import ShareCrypto
public import ShareRecovery

extension HTTPWalletClient {
    /// Eject (docs/eject.md): asks the server's custodian for its signing share of the wallet and
    /// rebuilds the full private key from it and the device's share, with
    /// `KeyEjection.rebuildKeyForEject(_:)`. The custodian's share travels sealed to a fresh key of
    /// this call. Afterwards the server refuses to sign for the wallet (`walletEjected`), and keeps
    /// no signing share of it: from here on the returned key is the wallet.
    ///
    /// The call sends a bearer token of purpose ``TokenPurpose/eject``, minted by its own OTP flow;
    /// the server spends it. A lost answer is replayed by the transport's retry (same
    /// `Idempotency-Key`); after that, the key can still be rebuilt offline from a backup.
    /// - Parameters:
    ///   - share: The device's signing share (party 1 of a 2-of-2 wallet, with its secret), of the
    ///     wallet's current set.
    ///   - clientId: The user.
    ///   - random: The device's random source (the sealing key).
    /// - Returns: The rebuilt key, checked against the wallet's public key.
    /// - Throws: `ShareRecoveryError`: `walletEjected` when the wallet was ejected before;
    ///   `noMatchingShare` when the server holds no share of it; `publicKeyMismatch` (party 2) when
    ///   the server answered for another wallet or set; `unsealFailed` or `invalidShare` (party 2)
    ///   when its share does not open or does not match its public share; `TransportError`
    ///   `forbidden` for a token of another purpose, `conflict` for a share of an older set.
    public func eject(share: ShareRecord, clientId: String, using random: some RandomSource = SystemRandom())
        async throws
        -> EjectedKey
    {
        guard share.partyIndex == 1, share.parties == 2, share.threshold == 2, share.kind == .signing,
            share.secret != nil
        else {
            throw ShareRecoveryError(
                .invalidParameters,
                "eject with the server needs the device's signing share (party 1, with its secret) of a 2-of-2 wallet")
        }
        let sessionKey = SealingKeyPair(using: random)
        let operation = "POST /wallets/eject"
        let reply = try await send(
            "/wallets/eject", operation: operation,
            body: JSONBody.encode([
                ("clientId", .string(clientId)), ("walletId", .string(share.walletId)),
                ("setId", .string(share.setId.hex)),
                ("clientKey", .string(Hex.encode(sessionKey.publicKey))),
            ]), purpose: .eject)
        let fields = try JSONBody.object(
            reply, required: ["walletId", "curve", "publicKey", "setId", "generation", "partyIndex", "sealedShare"],
            operation: operation)
        guard try fields.string("walletId") == share.walletId, try fields.string("curve") == share.curve.name,
            try fields.string("publicKey") == share.publicKey.hex, try fields.string("setId") == share.setId.hex,
            try fields.value("generation") == .number(String(share.generation)),
            try fields.value("partyIndex") == .number("2")
        else {
            throw ShareRecoveryError(
                .publicKeyMismatch, "\(operation): the server answered for another wallet, set or party", party: 2)
        }
        guard let sealed = Base64.decode(try fields.string("sealedShare")) else {
            throw ShareRecoveryError(.malformedInput, "\(operation): sealedShare is not base64")
        }
        let secret = try mappingCryptoErrors { () throws -> Scalar in
            let opened: SecureBytes
            do {
                opened = try SealedBox.open(sealed, with: sessionKey)
            } catch {
                throw ShareRecoveryError(
                    .unsealFailed, "\(operation): the custodian's share is not sealed to this call's key", party: 2)
            }
            return try Scalar(secret: opened, curve: share.curve)
        }
        // The record's init checks x_2·G == X_2 against the device's own commitments.
        let custodian: ShareRecord
        do {
            custodian = try ShareRecord(
                walletId: share.walletId, curve: share.curve, kind: share.kind, threshold: share.threshold,
                parties: share.parties,
                partyIndex: 2, generation: share.generation, setId: share.setId, secret: secret,
                commitments: share.commitments)
        } catch {
            throw ShareRecoveryError(
                .invalidShare, "\(operation): the custodian's share does not match its public share", party: 2)
        }
        return try KeyEjection.rebuildKeyForEject([share, custodian])
    }
}
