import HTTPTypes
import ShareCrypto
import ShareRecovery

/// The custodian as party 2 of a 2-of-2 wallet: its distributed key generation (docs/formats.md §10) and
/// its signatures (§11), behind `/wallets`. The protocol work is the engine's roles (`DKGParty`,
/// `SigningParty`); this type only keeps their state between a session's two requests, sealed in
/// `protocol_sessions`, and advances each session once.
struct WalletSessions: ProtocolSessionKeeping {
    static let sessionKinds: Set<ProtocolSessionRecord.Kind> = [.dkg, .signing]

    /// The device's and the custodian's party indices (docs/formats.md §2).
    static let device = 1
    static let custodian = 2

    let state: ServerState
    var custodianShares: CustodianSessions { CustodianSessions(state: state) }

    // MARK: DKG

    /// Round 1 and 2 of the custodian's DKG: checks the device's broadcast, answers with its own and
    /// with f_2(1) sealed to the device's `clientKey`; keeps its round-2 state sealed.
    /// - Returns: The 201 body: `sessionId`, `round1`, `sealedSubShare`, `custodianKey`.
    func openDKG(clientId: String, parameters: DKGParameters, deviceRound1: JSONValue, clientKey: [UInt8]) async throws
        -> JSONValue
    {
        guard parameters.threshold == 2, parameters.parties == 2 else {
            throw APIError(
                .badRequest, APIErrorCode(.invalidParameters),
                "the reference server takes part in 2-of-2 wallets (party 2)")
        }
        return try await ProtocolSessionKeeper(state: state, kind: .dkg).open(
            clientId: clientId, walletId: parameters.walletId
        ) { () async throws -> SessionOpening in
            guard try await state.storage.signingShares(clientId: clientId).isEmpty else {
                throw StorageRefusal.walletExists
            }
            let broadcast = try checkingClientInput {
                try ProtocolWire.decodeRound1(deviceRound1, sender: Self.device, curve: parameters.curve)
            }
            let party = try checkingClientInput { try DKGParty(parameters: parameters, partyIndex: Self.custodian) }
            let (round2, outgoing) = try checkingClientInput { try party.receive(round1: [broadcast]) }
            let sealedSubShare = try checkingClientInput {
                try SealedBox.seal(outgoing[0].subShare.rawRepresentation, to: clientKey)
            }
            return SessionOpening(
                binding: .object([
                    ("walletId", .string(parameters.walletId)), ("curve", .string(parameters.curve.name)),
                ]),
                secret: round2.serialized(),
                answer: [
                    ("round1", ProtocolWire.encode(party.round1Message)),
                    ("sealedSubShare", .string(Base64.encode(sealedSubShare))),
                    ("custodianKey", .string(Hex.encode(state.custodianKey.publicKey))),
                ])
        }
    }

    /// Round 3: checks f_1(2) (sealed to the custodian key), combines the custodian's signing share
    /// and stores it in the transaction that ends the session, with its `walletCreated` audit row.
    /// - Returns: The 200 body: `publicKey`, `setId`, `generation`, for the device to compare with its own.
    func finishDKG(_ session: ProtocolSessionRecord, sealedSubShare: [UInt8], origin: AuditOrigin) async throws
        -> JSONValue
    {
        guard session.state == .open else { throw APIError.conflict("this DKG session is finished") }
        let round2 = try DKGRound2State(
            serialized: try state.sealer.open(
                session.sealedState, table: "protocol_sessions", row: [session.id, session.kind.sealedStateLabel]))
        let share = try checkingClientInput { () throws -> ShareRecord in
            let opened: SecureBytes
            do {
                opened = try SealedBox.open(sealedSubShare, with: state.custodianKey)
            } catch {
                throw ShareRecoveryError(.unsealFailed, "sealedSubShare does not open with the custodian key")
            }
            let subShare = try mappingCryptoErrors { try Scalar(secure: opened, curve: round2.parameters.curve) }
            return try round2.finish(round2: [
                DKGRound2Message(sender: Self.device, receiver: Self.custodian, subShare: subShare)
            ])
        }
        let sealed = try custodianShares.sealedSigningShare(share, clientId: session.clientId)
        let created = origin.event(.walletCreated, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = share.walletId
            $0.setId = share.setId.hex
            $0.generation = share.generation
        }
        guard
            try await state.storage.completeDKG(
                id: session.id, share: sealed, clientId: session.clientId, now: state.now(), created: created)
        else {
            throw APIError.conflict("this DKG session is finished")
        }
        return .object([
            ("publicKey", .string(share.publicKey.hex)), ("setId", .string(share.setId.hex)),
            ("generation", .number(String(share.generation))),
        ])
    }

    // MARK: Signing

    /// Round 1 of the custodian's signature: a fresh nonce for the wallet's current signing set,
    /// refused when the device's share is of another set (after a recovery, the old one). With
    /// tweaks, the nonce is bound to the tweaked key, and the session keeps them: round 2 signs for them.
    /// - Returns: The 201 body: `sessionId`, `commitment`.
    func openSigning(
        clientId: String, walletId: String, mode: SigningMode, deviceSetId: String, tweaks: SigningTweaks = .none
    )
        async throws -> JSONValue
    {
        try await ProtocolSessionKeeper(state: state, kind: .signing).open(clientId: clientId, walletId: walletId) {
            () async throws -> SessionOpening in
            let primary = try await currentShare(clientId: clientId, walletId: walletId)
            guard let share = try await signingShare(primary, clientId: clientId, setId: deviceSetId) else {
                throw APIError.conflict(
                    "the device's share is of set \(deviceSetId.prefix(32)), which no longer signs: a share from before a recovery or a refresh, or of a removed device, cannot sign; the wallet's primary set is \(primary.setId) generation \(primary.generation)"
                )
            }
            try await refuseUnrefreshed(clientId: clientId, primary: primary, signingSetId: deviceSetId)
            let nonce = try checkingClientInput { () throws(ShareRecoveryError) -> FrostSigningNonce in
                try SigningParty(share: share, mode: mode).commit(tweaks: tweaks)
            }
            // The sealed copy is the only one left: round 2 restores it, once.
            defer { nonce.discard() }
            var binding: [(key: String, value: JSONValue)] = [
                ("walletId", .string(walletId)), ("setId", .string(share.setId.hex)), ("mode", .string(mode.rawValue)),
                ("commitment", ProtocolWire.encode(nonce.commitment)),
            ]
            // Only a tweaked session names its tweaks, so rows written before tweaks existed read the same.
            if !tweaks.isEmpty {
                binding += [("path", .string(tweaks.path.description)), ("taproot", .bool(tweaks.taproot))]
            }
            return SessionOpening(
                binding: .object(binding), secret: try nonce.serializedSecret(),
                answer: [("commitment", ProtocolWire.encode(nonce.commitment))])
        }
    }

    /// Round 2: the custodian's signature share over the message with both commitments. The nonce is
    /// consumed by the transaction that releases the share (and appends `signatureShareReleased`); a
    /// second request is `nonceReused` (409).
    /// - Returns: The 200 body: `signatureShare`.
    func sign(_ session: ProtocolSessionRecord, message: [UInt8], deviceCommitment: JSONValue, origin: AuditOrigin)
        async throws -> JSONValue
    {
        guard session.state == .open else {
            throw APIError(.conflict, APIErrorCode(.nonceReused), "this signing session already signed; open a new one")
        }
        let bound = try StrictJSON.parse(Array(session.publicJSON.utf8))
        guard case .string(let walletId) = try SessionWire.member(bound, "walletId"),
            case .string(let setId) = try SessionWire.member(bound, "setId"),
            case .string(let modeName) = try SessionWire.member(bound, "mode"),
            let mode = SigningMode(rawValue: modeName)
        else { throw ShareRecoveryError(.storeCorrupted, "a signing session's binding is unreadable") }
        let tweaks = try Self.tweaks(bound)
        try await refuseEjected(clientId: session.clientId, walletId: walletId)
        let primary = try await currentShare(clientId: session.clientId, walletId: walletId)
        guard let share = try await signingShare(primary, clientId: session.clientId, setId: setId) else {
            throw StorageRefusal.signingSetChanged
        }
        let nonce = try FrostSigningNonce(
            serializedSecret: try state.sealer.open(
                session.sealedState, table: "protocol_sessions", row: [session.id, session.kind.sealedStateLabel]),
            curve: share.curve)
        let signatureShare = try checkingClientInput { () throws -> Scalar in
            let commitment = try ProtocolWire.decodeCommitment(deviceCommitment, party: Self.device, curve: share.curve)
            let package = try SigningPackage(
                signingSet: share, message: message, mode: mode,
                commitments: [Self.device: commitment, Self.custodian: nonce.commitment], tweaks: tweaks)
            return try SigningParty(share: share, mode: mode).sign(nonce: nonce, package: package)
        }
        let released = origin.event(.signatureShareReleased, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = walletId
            $0.setId = setId
            $0.mode = mode
        }
        guard
            try await state.storage.completeSigning(
                id: session.id, clientId: session.clientId, setId: setId, now: state.now(), released: released)
        else {
            throw APIError(.conflict, APIErrorCode(.nonceReused), "this signing session already signed; open a new one")
        }
        return .object([("signatureShare", ProtocolWire.encode(signatureShare: signatureShare))])
    }

    /// The tweaks a signing session was opened for (none when its binding names none).
    static func tweaks(_ binding: JSONValue) throws -> SigningTweaks {
        switch (binding["path"], binding["taproot"]) {
        case (nil, nil): return .none
        case (.string(let path)?, .bool(let taproot)?):
            return SigningTweaks(path: try DerivationPath(path), taproot: taproot)
        default: throw ShareRecoveryError(.storeCorrupted, "a signing session's tweaks are unreadable")
        }
    }

    /// The custodian's share of set `setId`: the primary set's, or an added device's (docs/devices.md).
    func signingShare(_ primary: ShareRecord, clientId: String, setId: String) async throws -> ShareRecord? {
        if primary.setId.hex == setId { return primary }
        return try await DeviceSessions(state: state).custodianShare(clientId: clientId, setId: setId)
    }

    /// Refuses signing with the wallet's primary set once it is as old as the refresh policy's
    /// `refreshAfterSeconds` (docs/server.md, "Refresh policy"). An added device's set is not its
    /// business (a refresh renews the primary set only), nor a set of unknown age (stored by a release
    /// before share ages).
    /// - Throws: 409 `refreshRequired`.
    func refuseUnrefreshed(clientId: String, primary: ShareRecord, signingSetId: String) async throws {
        guard let limit = state.configuration.refreshAfterSeconds, primary.setId.hex == signingSetId else { return }
        let storedAt =
            try await state.storage.signingShares(clientId: clientId).first { $0.partyIndex == Self.custodian }?
            .storedAt ?? 0
        let age = try await state.now() - storedAt
        guard storedAt > 0, age >= limit else { return }
        throw APIError(
            .conflict, .refreshRequired,
            "the wallet's signing set is \(age / 86_400) days old and the server requires a refresh after \(limit / 86_400): refresh the shares (share-recovery refresh --server), then sign"
        )
    }

    /// The custodian's share of the user's wallet.
    func currentShare(clientId: String, walletId: String) async throws -> ShareRecord {
        let shares = try await custodianShares.signingShares(clientId: clientId)
        guard let share = shares.first(where: { $0.partyIndex == Self.custodian }), share.walletId == walletId else {
            throw APIError(
                .notFound, APIErrorCode(.noMatchingShare),
                "the custodian holds no signing share of this wallet for this user")
        }
        return share
    }
}
