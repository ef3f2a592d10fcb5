import HTTPTypes
import ShareCrypto
import ShareRecovery

/// The custodian as the second ECDSA signer of a device's 2-of-2 set (docs/formats.md §12,
/// docs/ecdsa.md), behind `/wallets/ecdsa`: the pair setup of the device and the custodian (two
/// rounds, kept sealed in `ecdsa_pair_setups`, bound to the set and its generation) and the three
/// rounds of a signature over it. The protocol work is the engine's (`PairSetupParty`,
/// `ECDSASigningParty`); this type keeps the round states sealed in `protocol_sessions` between
/// requests, each used once, and on a failed check ends the session and discards the setup.
struct ECDSASessions: ProtocolSessionKeeping {
    static let sessionKinds: Set<ProtocolSessionRecord.Kind> = [.ecdsaPairSetup, .ecdsaSigning]

    /// The round whose messages an abort's failed check was checking (audit `check`).
    enum Check: String, Sendable { case round1, round2, round3 }

    let state: ServerState
    var wallet: WalletSessions { WalletSessions(state: state) }

    /// What a session is bound to, from its public binding.
    struct Binding {
        let walletId: String
        let setId: String
        let generation: UInt32

        var json: [(key: String, value: JSONValue)] {
            [("walletId", .string(walletId)), ("setId", .string(setId)), ("generation", .number(String(generation)))]
        }

        init(walletId: String, setId: String, generation: UInt32) {
            self.walletId = walletId
            self.setId = setId
            self.generation = generation
        }

        init(_ session: ProtocolSessionRecord) throws {
            let bound = try StrictJSON.parse(Array(session.publicJSON.utf8))
            guard case .string(let walletId) = try SessionWire.member(bound, "walletId"),
                case .string(let setId) = try SessionWire.member(bound, "setId"),
                case .number(let text) = try SessionWire.member(bound, "generation"), let generation = UInt32(text)
            else { throw ShareRecoveryError(.storeCorrupted, "an ECDSA session's binding is unreadable") }
            self.init(walletId: walletId, setId: setId, generation: generation)
        }
    }

    // MARK: Pair setup

    /// Round 1 and 2 of the custodian's pair setup with the device: checks the device's round 1 (its
    /// proof), answers with its own round 1 and its round 2, and keeps its state sealed until the
    /// device's round 2.
    /// - Returns: The 201 body: `sessionId`, `round1`, `round2`.
    func openPairSetup(clientId: String, binding: Binding, deviceRound1: [UInt8]) async throws -> JSONValue {
        try await ProtocolSessionKeeper(state: state, kind: .ecdsaPairSetup).open(
            clientId: clientId, walletId: binding.walletId
        ) { () async throws -> SessionOpening in
            let share = try await custodianShare(clientId: clientId, binding)
            let (round1, round2, exported) = try checkingClientInput {
                let party = try PairSetupParty(share: share, peer: Self.peer(of: share))
                let round2 = try party.round2(peerMessage: deviceRound1)
                return (party.round1Message, round2, try party.exportState())
            }
            return SessionOpening(
                binding: .object(binding.json), secret: exported,
                answer: [("round1", .string(Base64.encode(round1))), ("round2", .string(Base64.encode(round2)))])
        }
    }

    /// The device's round 2 finishes the custodian's setup, which is kept sealed for the set (replacing
    /// an earlier one) in the transaction that ends the session, with its `ecdsaPairSetupMade` row.
    /// A check that fails ends the session too: a setup state is used once.
    /// - Returns: The 200 body: `setId`, `generation`.
    func finishPairSetup(_ session: ProtocolSessionRecord, deviceRound2: [UInt8], origin: AuditOrigin) async throws
        -> JSONValue
    {
        guard session.state == .open else { throw Self.used("this pair setup has finished; make a new one") }
        let binding = try Binding(session)
        let share = try await custodianShare(clientId: session.clientId, binding)
        let exported = try state.sealer.open(
            session.sealedState, table: "protocol_sessions", row: [session.id, session.kind.sealedStateLabel])
        let setup: PairSetup
        do {
            setup = try checkingClientInput {
                try PairSetupParty(share: share, peer: Self.peer(of: share), state: exported)
                    .finish(peerMessage: deviceRound2)
            }
        } catch {
            _ = try await state.storage.endECDSASession(id: session.id, now: try await state.now())
            throw error
        }
        let sealed = try state.sealer.seal(
            try setup.rawRepresentation(), table: "ecdsa_pair_setups",
            row: [session.clientId, binding.setId, String(binding.generation)])
        let made = origin.event(.ecdsaPairSetupMade, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = binding.walletId
            $0.setId = binding.setId
            $0.generation = binding.generation
        }
        guard
            try await state.storage.completePairSetup(
                id: session.id, clientId: session.clientId,
                setup: StoredPairSetup(setId: binding.setId, generation: binding.generation, sealedSetup: sealed),
                now: try await state.now(), made: made)
        else { throw Self.used("this pair setup has finished; make a new one") }
        return .object([("setId", .string(binding.setId)), ("generation", .number(String(binding.generation)))])
    }

    // MARK: Signing

    /// Round 1 of a signature over the set's pair setup: the custodian's round-1 message; its round
    /// state is kept sealed with the device's round 1, which round 2 answers.
    /// - Returns: The 201 body: `sessionId`, `round1`.
    /// - Throws: 409 `pairSetupStale` when the custodian keeps no setup of the set and generation.
    func openSigning(
        clientId: String, binding: Binding, digest: [UInt8], path: DerivationPath, deviceRound1: [UInt8]
    ) async throws -> JSONValue {
        try await ProtocolSessionKeeper(state: state, kind: .ecdsaSigning).open(
            clientId: clientId, walletId: binding.walletId
        ) { () async throws -> SessionOpening in
            // The primary share read once, for the device's share and for the refresh policy's age.
            let primary = try await wallet.currentStoredShare(clientId: clientId, walletId: binding.walletId)
            let share = try await custodianShare(primary: primary.share, clientId: clientId, binding)
            try await wallet.refuseUnrefreshed(primary: primary, signingSetId: binding.setId)
            let setup = try await pairSetup(clientId: clientId, share: share)
            let (round1, exported) = try checkingClientInput {
                let party = try ECDSASigningParty(
                    share: share, signers: Self.signers, setups: [setup], digest: digest, path: path)
                let round1 = try party.round1()
                return (round1[setup.peerIndex] ?? [], try party.exportState())
            }
            return SessionOpening(
                binding: .object(
                    binding.json + [("digest", .string(Hex.encode(digest))), ("path", .string(path.description))]),
                secret: Self.framing(exported, deviceRound1),
                answer: [("round1", .string(Base64.encode(round1)))])
        }
    }

    /// Round 2: the custodian checks the device's round 1 (kept since round 1) and answers with its
    /// round 2; its round state moves on with the device's round 2, which round 3 checks. A second
    /// request finds the state used: 409 `nonceReused`.
    /// - Returns: The 200 body: `round2`.
    func round2(_ session: ProtocolSessionRecord, deviceRound2: [UInt8], origin: AuditOrigin) async throws
        -> JSONValue
    {
        guard session.state == .open else { throw Self.used("this signing session is past round 2; open a new one") }
        let signer = try await restore(session)
        let outgoing = try await aborting(session, signer, check: .round1, origin: origin) {
            () throws(ShareRecoveryError) in
            try signer.party.round2([signer.peer: signer.deviceMessage])
        }
        let exported = try checkingClientInput { try signer.party.exportState() }
        let sealed = try state.sealer.seal(
            Self.framing(exported, deviceRound2), table: "protocol_sessions",
            row: [session.id, session.kind.sealedStateLabel])
        guard
            try await state.storage.advanceECDSASigning(id: session.id, sealedState: sealed, now: try await state.now())
        else {
            throw Self.used("this signing session is past round 2; open a new one")
        }
        return .object([("round2", .string(Base64.encode(outgoing[signer.peer] ?? [])))])
    }

    /// Round 3: the custodian checks the device's round 2, makes its broadcast, combines both into the
    /// signature and verifies it under the signing key. The round state is deleted in the transaction
    /// that appends `ecdsaSigned`, and only while the set still signs.
    /// - Returns: The 200 body: `round3` (the custodian's broadcast) and `signature` (r ‖ s ‖ v, hex).
    func round3(_ session: ProtocolSessionRecord, deviceRound3: [UInt8], origin: AuditOrigin) async throws
        -> JSONValue
    {
        switch session.state {
        case .finished: break
        case .open: throw APIError.conflict("round 2 of this signing session comes first")
        case .done: throw Self.used("this signing session has ended; open a new one")
        }
        let signer = try await restore(session)
        let own = try await aborting(session, signer, check: .round2, origin: origin) { () throws(ShareRecoveryError) in
            try signer.party.round3([signer.peer: signer.deviceMessage])
        }
        let signature = try await aborting(session, signer, check: .round3, origin: origin) {
            () throws(ShareRecoveryError) in
            try signer.party.signature([signer.peer: deviceRound3, signer.share.partyIndex: own])
        }
        let signed = origin.event(.ecdsaSigned, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = signer.binding.walletId
            $0.setId = signer.binding.setId
            $0.generation = signer.binding.generation
        }
        guard
            try await state.storage.completeSigning(
                id: session.id, clientId: session.clientId, setId: signer.binding.setId, from: .finished,
                now: try await state.now(), released: signed)
        else { throw Self.used("this signing session has ended; open a new one") }
        return .object([
            ("round3", .string(Base64.encode(own))), ("signature", .string(Hex.encode(signature.recoverable))),
        ])
    }

    /// The device's abort: a check of its own failed on the custodian's round `check` messages. The
    /// session ends and the set's pair setup is discarded, audited as `ecdsaAborted` naming the
    /// custodian as the culprit, as the device's check did.
    func abort(_ session: ProtocolSessionRecord, check: Check, origin: AuditOrigin) async throws {
        let binding = try Binding(session)
        let custodian = try await custodianShare(clientId: session.clientId, binding, checkingGeneration: false)
        try await discard(session, binding, check: check, culprit: custodian.partyIndex, origin: origin)
    }

    // MARK: Round states

    /// A signer restored from its session: the custodian's share, its party and the device's message
    /// kept for the next round.
    struct RestoredSigner {
        let binding: Binding
        let share: ShareRecord
        let party: ECDSASigningParty
        let peer: Int
        let deviceMessage: [UInt8]
    }

    private func restore(_ session: ProtocolSessionRecord) async throws -> RestoredSigner {
        let binding = try Binding(session)
        let bound = try StrictJSON.parse(Array(session.publicJSON.utf8))
        guard case .string(let digestText) = try SessionWire.member(bound, "digest"),
            let digest = Hex.decode(digestText),
            case .string(let pathText) = try SessionWire.member(bound, "path")
        else { throw ShareRecoveryError(.storeCorrupted, "an ECDSA signing session's binding is unreadable") }
        let path = try DerivationPath(pathText)
        let share = try await custodianShare(clientId: session.clientId, binding)
        let setup = try await pairSetup(clientId: session.clientId, share: share)
        let secret = try state.sealer.open(
            session.sealedState, table: "protocol_sessions", row: [session.id, session.kind.sealedStateLabel])
        let (exported, deviceMessage) = try Self.unframing(secret)
        let party = try checkingClientInput {
            try ECDSASigningParty(
                share: share, signers: Self.signers, setups: [setup], digest: digest, path: path,
                state: exported)
        }
        return RestoredSigner(
            binding: binding, share: share, party: party, peer: setup.peerIndex, deviceMessage: deviceMessage)
    }

    /// Runs one round; a failed check ends the session and discards the set's pair setup (audited as
    /// `ecdsaAborted` with `check` and the culprit), then answers 400 `ecdsaCheckFailed`.
    private func aborting<R>(
        _ session: ProtocolSessionRecord, _ signer: RestoredSigner, check: Check, origin: AuditOrigin,
        _ round: () throws(ShareRecoveryError) -> R
    ) async throws -> R {
        do {
            return try round()
        } catch let error where error.code == .ecdsaCheckFailed {
            try await discard(session, signer.binding, check: check, culprit: error.party, origin: origin)
            throw APIError.clientInput(error)
        } catch {
            throw APIError.clientInput(error)
        }
    }

    private func discard(
        _ session: ProtocolSessionRecord, _ binding: Binding, check: Check, culprit: Int?, origin: AuditOrigin
    ) async throws {
        let aborted = origin.event(.ecdsaAborted, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = binding.walletId
            $0.setId = binding.setId
            $0.generation = binding.generation
            $0.reason = APIErrorCode(.ecdsaCheckFailed)
            $0.check = check.rawValue
            $0.culprit = culprit
        }
        _ = try await state.storage.abortECDSASigning(
            id: session.id, clientId: session.clientId, setId: binding.setId, now: try await state.now(),
            aborted: aborted)
    }

    /// A round state and the device's message it waits to answer, as one sealed value:
    /// `length (4, big-endian) || state || message`.
    static func framing(_ exported: SecureBytes, _ message: [UInt8]) -> SecureBytes {
        let count = UInt32(exported.count)
        return SecureBytes.concatenating([
            SecureBytes(copying: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> $0) }), exported,
            SecureBytes(copying: message),
        ])
    }

    static func unframing(_ sealed: SecureBytes) throws -> (SecureBytes, [UInt8]) {
        let bytes = try sealed.slice(0..<min(4, sealed.count)).revealedBytes()
        guard bytes.count == 4 else { throw ShareRecoveryError(.storeCorrupted, "an ECDSA round state is truncated") }
        let count = bytes.reduce(0) { $0 << 8 | Int($1) }
        guard count <= sealed.count - 4 else {
            throw ShareRecoveryError(.storeCorrupted, "an ECDSA round state is truncated")
        }
        return (
            try sealed.slice(4..<(4 + count)), try sealed.slice((4 + count)..<sealed.count).revealedBytes()
        )
    }

    // MARK: Shares and setups

    /// The custodian's share of the device's set, with its secret; the device's generation must be its.
    /// - Throws: 409 `conflict` when the set no longer signs; 409 `pairSetupStale` for another
    ///   generation; 400 `invalidParameters` for a wallet that is not a 2-of-2 secp256k1 one.
    func custodianShare(clientId: String, _ binding: Binding, checkingGeneration: Bool = true) async throws
        -> ShareRecord
    {
        try await custodianShare(
            primary: try await wallet.currentShare(clientId: clientId, walletId: binding.walletId), clientId: clientId,
            binding, checkingGeneration: checkingGeneration)
    }

    /// ``custodianShare(clientId:_:checkingGeneration:)`` with the wallet's primary share already read.
    func custodianShare(
        primary: ShareRecord, clientId: String, _ binding: Binding, checkingGeneration: Bool = true
    ) async throws -> ShareRecord {
        guard let share = try await wallet.signingShare(primary, clientId: clientId, setId: binding.setId) else {
            throw APIError.conflict(
                "the device's share is of set \(binding.setId.prefix(32)), which no longer signs: a share from before a recovery or a refresh, or of a removed device, cannot sign"
            )
        }
        guard share.curve == .secp256k1, share.parties == 2, share.threshold == 2 else {
            throw APIError(
                .badRequest, APIErrorCode(.invalidParameters),
                "ECDSA signs with the custodian for 2-of-2 secp256k1 wallets")
        }
        guard !checkingGeneration || share.generation == binding.generation else {
            throw APIError(
                .conflict, APIErrorCode(.pairSetupStale),
                "the set is at generation \(share.generation), not \(binding.generation): make a fresh pair setup with the current share"
            )
        }
        return share
    }

    /// The custodian's stored setup with the device for `share`'s set and generation.
    /// - Throws: 409 `pairSetupStale` when none is kept (never made, discarded by an abort, or of
    ///   another generation).
    private func pairSetup(clientId: String, share: ShareRecord) async throws -> PairSetup {
        guard let stored = try await state.storage.ecdsaPairSetup(clientId: clientId, setId: share.setId.hex),
            stored.generation == share.generation
        else {
            throw APIError(
                .conflict, APIErrorCode(.pairSetupStale),
                "the custodian keeps no ECDSA pair setup for this set and generation (never made, or discarded by an aborted signature): make a fresh pair setup, then sign"
            )
        }
        let bytes = try state.sealer.open(
            stored.sealedSetup, table: "ecdsa_pair_setups",
            row: [clientId, stored.setId, String(stored.generation)])
        return try PairSetup(rawRepresentation: bytes)
    }

    /// The device's index in the custodian's 2-of-2 set.
    static func peer(of share: ShareRecord) -> Int { share.partyIndex == 1 ? 2 : 1 }

    /// The signers of every ECDSA signature with the custodian: the device's 2-of-2 set.
    static let signers = [1, 2]

    static func used(_ message: String) -> APIError { APIError(.conflict, APIErrorCode(.nonceReused), message) }
}
