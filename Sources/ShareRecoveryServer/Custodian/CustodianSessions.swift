import HTTPTypes
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// The custodian role of FORMATS.md §3 behind `/recovery/sessions`: the engine's one custodian role
/// (`ResharingCustodian`, which `LocalCustodian` keeps in memory) with its values in the database
/// (secrets sealed under the master key), so any server process can take the next call. Confirm
/// enforces the role's rule (the signing set must not have moved) inside its storage transaction.
struct CustodianSessions: Sendable {
    /// Why a set is reshared.
    enum Purpose: String, Sendable {
        case backup
        case recovery

        /// The token purpose a session of this kind needs.
        var tokenPurpose: TokenPurpose { self == .backup ? .addOrUpdateRecovery : .recover }

        /// The engine's purpose for a method.
        func request(_ method: BackupMethod) -> ResharingSessionRequest.Purpose {
            self == .backup ? .backup(method) : .recovery(method)
        }
    }

    let state: ServerState

    // MARK: Open

    /// Opens the session with the one custodian role (`ResharingCustodian.open`) and stores its value:
    /// the plan, the public half of the dealings and, sealed, the session key and the sub-shares for
    /// the custodian's own new parties.
    /// - Returns: The 201 body: `sessionId`, `plan`, `custodianDealings`, `custodianKey`.
    func open(clientId: String, purpose: Purpose, method: BackupMethod, clientShare: ShareRecord, clientKey: [UInt8])
        async throws
        -> JSONValue
    {
        let own = try await signingShares(clientId: clientId)
        var candidates: [String] = []
        if purpose == .recovery { candidates = try await state.fetcher.fetch(clientId: clientId, webhookBase: state.webhookBase) }
        let request = ResharingSessionRequest(clientId: clientId, purpose: purpose.request(method), clientShare: clientShare)
        let opened = try checkingClientInput {
            try ResharingCustodian.open(
                request: request, signingShares: own, candidates: candidates, custodianKey: state.custodianKey)
        }
        let plan = opened.plan
        let sessionKey = SealingKeyPair()
        let sessionId = Hex.encode(SystemRandom().bytes(count: 16))
        // The client receives only its own sub-share of each custodian dealing, sealed to its session key.
        let offered = try checkingClientInput {
            try opened.offeredDealings.map { try SessionWire.encode($0, sealingTo: [plan.oldSet.partyIndex: clientKey]) }
        }
        var secretParts = [sessionKey.secretKey]
        for dealing in opened.dealings {
            // Opened guarantees a sub-share for every custodian party.
            for party in ResharingCustodian.ownParties(plan) { secretParts.append(dealing.subShares[party]!.rawRepresentation) }
        }
        let sealedSecrets = try state.sealer.seal(
            SecureBytes.concatenating(secretParts), table: "protocol_sessions", row: [sessionId, "secrets"])
        let publicDealings = JSONValue.array(
            opened.dealings.map {
                .object([
                    ("dealerIndex", .number(String($0.dealerIndex))),
                    ("commitments", SessionWire.encode(points: $0.commitments)),
                ])
            })
        try await state.storage.createSession(
            SessionRecord(
                id: sessionId, clientId: clientId, purpose: purpose.rawValue, method: method.name, state: .open,
                planJSON: JSONWriter.write(SessionWire.encode(plan)), dealingsJSON: JSONWriter.write(publicDealings),
                expectedSet: opened.expectedSet?.hex ?? "", sealedSecrets: sealedSecrets, sealedPending: nil,
                expiresAt: state.now + Int64(state.configuration.sessionLifetimeSeconds)))
        return .object([
            ("sessionId", .string(sessionId)),
            ("plan", SessionWire.encode(plan)),
            ("custodianDealings", .array(offered)),
            ("custodianKey", .string(Hex.encode(sessionKey.publicKey))),
        ])
    }

    // MARK: Finish

    /// Restores the opened role value from its row, lets it finish with the client's dealing (§3
    /// steps 2–5), and keeps a recovery's new shares as pending.
    /// - Returns: The 200 body: `newCommitments` and `custodianBackupShares` (empty for a recovery).
    func finish(_ session: SessionRecord, clientDealing: JSONValue) async throws -> JSONValue {
        guard session.state == .open else { throw APIError.conflict("the session is already finished") }
        let plan = try SessionWire.decodePlan(try StrictJSON.parse(session.planJSON))
        guard let purpose = Purpose(rawValue: session.purpose), let method = BackupMethod(name: session.method) else {
            throw ShareRecoveryError(.storageFailure, "unknown session purpose or method")
        }
        let ownParties = ResharingCustodian.ownParties(plan)
        let secrets = try state.sealer.open(
            session.sealedSecrets, table: "protocol_sessions", row: [session.id, "secrets"])
        let publicDealings = try StrictJSON.parse(session.dealingsJSON)
        guard case .array(let entries) = publicDealings, secrets.count == 32 + entries.count * ownParties.count * 32
        else {
            throw ShareRecoveryError(.storeCorrupted, "the session's secrets do not match its dealings")
        }
        let sessionKey = try SealingKeyPair(secretKey: try secrets.slice(0..<32))
        var custodianDealings: [Dealing] = []
        var offset = 32
        for entry in entries {
            guard case .number(let indexText) = try SessionWire.member(entry, "dealerIndex"),
                let dealerIndex = Int(indexText)
            else {
                throw ShareRecoveryError(.storeCorrupted, "a stored dealing has no dealer index")
            }
            let commitments = try SessionWire.decodePoints(
                try SessionWire.member(entry, "commitments"), curve: plan.oldSet.curve)
            var subShares: [Int: Scalar] = [:]
            for party in ownParties {
                subShares[party] = try Scalar(secure: try secrets.slice(offset..<offset + 32), curve: plan.oldSet.curve)
                offset += 32
            }
            custodianDealings.append(Dealing(dealerIndex: dealerIndex, commitments: commitments, subShares: subShares))
        }
        let opened = try ResharingCustodian.Opened(
            purpose: purpose.request(method), plan: plan, dealings: custodianDealings,
            expectedSet: session.expectedSet.isEmpty ? nil : try SetID(bytes: Hex.decode(session.expectedSet) ?? []))
        let finished = try checkingClientInput { () throws -> ResharingCustodian.Finished in
            let received = try SessionWire.decodeDealing(clientDealing, curve: plan.oldSet.curve, openingWith: sessionKey)
            return try opened.finish(clientDealing: received, custodianPublicKey: state.custodianKey.publicKey)
        }
        var sealedPending: [UInt8]?
        if let keep = finished.signingSetToKeep {
            var parts: [SecureBytes] = []
            for share in keep {
                let binary = try share.binary()
                parts.append(SecureBytes(copying: [UInt8(binary.count >> 8), UInt8(binary.count & 0xFF)]))
                parts.append(binary)
            }
            sealedPending = try state.sealer.seal(
                SecureBytes.concatenating(parts), table: "protocol_sessions", row: [session.id, "pending"])
        }
        guard try await state.storage.finishSession(id: session.id, sealedPending: sealedPending, now: state.now) else {
            throw APIError.conflict("the session is already finished")
        }
        let result = finished.result
        return .object([
            ("newCommitments", SessionWire.encode(points: result.newCommitments)),
            ("custodianBackupShares", .array(result.custodianBackupShares.map { .string($0) })),
        ])
    }

    // MARK: Confirm

    /// Makes the pending set current. For a recovery the old signing set is dropped in the same transaction.
    /// A confirmed session is confirmed already: a retry after a lost answer succeeds and changes nothing.
    func confirm(_ session: SessionRecord) async throws {
        if session.state == .confirmed { return }
        guard session.state == .finished else { throw APIError.conflict("the session is not finished") }
        var newShares: [SealedSigningShare]?
        if session.purpose == Purpose.recovery.rawValue {
            guard let sealed = session.sealedPending else {
                throw ShareRecoveryError(.storeCorrupted, "a finished recovery session has no pending shares")
            }
            let pending = try state.sealer.open(sealed, table: "protocol_sessions", row: [session.id, "pending"])
            var shares: [SealedSigningShare] = []
            var offset = 0
            while offset < pending.count {
                let length = try pending.slice(offset..<offset + 2).withUnsafeBytes { Int($0[0]) << 8 | Int($0[1]) }
                let record = try ShareRecord(binary: try pending.slice(offset + 2..<offset + 2 + length))
                offset += 2 + length
                shares.append(try sealedSigningShare(record, clientId: session.clientId))
            }
            newShares = shares
        }
        switch try await state.storage.confirmSession(id: session.id, newShares: newShares, now: state.now) {
        case .done: return
        case .notFound, .tokenSpent: throw APIError.notFound("no such session")
        }
    }

    // MARK: Signing shares

    /// The custodian's current signing shares of a client, opened.
    func signingShares(clientId: String) async throws -> [ShareRecord] {
        try await state.storage.signingShares(clientId: clientId).map { stored in
            let binary = try state.sealer.open(
                stored.sealedRecord, table: "signing_shares", row: [clientId, String(stored.partyIndex), stored.setId])
            let record = try ShareRecord(binary: binary)
            guard record.partyIndex == stored.partyIndex, record.setId.hex == stored.setId else {
                throw ShareRecoveryError(.storeCorrupted, "a signing share disagrees with its row")
            }
            return record
        }
    }

    /// A signing share sealed for its row.
    func sealedSigningShare(_ record: ShareRecord, clientId: String) throws -> SealedSigningShare {
        SealedSigningShare(
            partyIndex: record.partyIndex, setId: record.setId.hex, generation: record.generation,
            sealedRecord: try state.sealer.seal(
                try record.binary(), table: "signing_shares",
                row: [clientId, String(record.partyIndex), record.setId.hex]))
    }

}
