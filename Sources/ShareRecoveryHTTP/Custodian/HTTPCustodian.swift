public import ShareCrypto
import Logging
public import ShareRecovery

/// The custodian role over the reference server's `/recovery/sessions` endpoints.
///
/// Each session gets a fresh X25519 key pair: its public half goes to the server as `clientKey`,
/// and the server seals the client's sub-shares to it; the client seals its sub-shares for the
/// custodian's parties to the server's per-session `custodianKey`. So sub-shares never travel in
/// clear, whatever the transport does (`SessionWire`).
///
/// Every call sends `Authorization: Bearer` with a token of purpose ``TokenPurpose/recover``
/// (recovery sessions), ``TokenPurpose/addOrUpdateRecovery`` (backup sessions) or
/// ``TokenPurpose/sign`` (refresh sessions). Errors are those
/// of ``HTTPTransport``; a 4xx whose server code is one of the resharing codes (`noMatchingShare`,
/// `dealerCheckFailed`, …) arrives as that code, as with `LocalCustodian`.
public struct HTTPCustodian: Custodian, CustomStringConvertible {
    private let baseURL: String
    private let tokenProvider: TokenProvider
    private let transport: HTTPTransport
    private let random: any RandomSource
    private let sessions = SessionTable()

    /// Creates a custodian client.
    /// - Parameters:
    ///   - baseURL: The server's base, e.g. `https://custodian.example.com` (trailing slashes are ignored).
    ///   - tokenProvider: Supplies bearer tokens.
    ///   - transport: Timeouts, retries and limits. The default allows 30 s per call: opening a
    ///     recovery session makes the server fetch backup shares through a webhook with its own 10 s budget.
    ///   - random: Source of the session keys and sealing (the system CSPRNG in production).
    public init(
        baseURL: String, tokenProvider: @escaping TokenProvider,
        transport: HTTPTransport = HTTPTransport(configuration: .init(timeout: .seconds(30))),
        random: any RandomSource = SystemRandom()
    ) {
        self.baseURL = URLText.base(baseURL)
        self.tokenProvider = tokenProvider
        self.transport = transport
        self.random = random
    }

    /// `POST /recovery/sessions`: sends the request and a fresh `clientKey`, then decodes the plan
    /// and the custodian's dealings, opening the sub-shares sealed to the client.
    /// - Parameter request: What to reshare.
    /// - Returns: The offer; the engine checks the plan against its own share.
    /// - Throws: `ShareRecoveryError`; `malformedInput` for a response of the wrong
    ///   shape, `unsealFailed` for a sub-share sealed to another key.
    public func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
        let purpose: TokenPurpose
        let purposeName: String
        let method: BackupMethod?
        switch request.purpose {
        case .backup(let backupMethod):
            (purpose, purposeName, method) = (.addOrUpdateRecovery, "backup", backupMethod)
        case .recovery(let backupMethod):
            (purpose, purposeName, method) = (.recover, "recovery", backupMethod)
        case .refresh:
            (purpose, purposeName, method) = (.sign, "refresh", nil)
        }
        let sessionKey = SealingKeyPair(using: random)
        var members: [(key: String, value: JSONValue)] = [
            ("clientId", .string(request.clientId)),
            ("purpose", .string(purposeName)),
        ]
        // A refresh reshares the signing set itself: it has no backup method.
        if let method { members.append(("backupMethod", .string(method.apiName))) }
        members += [
            ("clientShare", request.clientShare.jsonValue(includingSecret: false)),
            ("clientKey", .string(Hex.encode(sessionKey.publicKey))),
        ]
        if let chosen = request.sessionId { members.append(("sessionId", .string(chosen))) }
        let body = JSONBody.encode(members)
        let operation = "POST /recovery/sessions"
        let reply = try await send(.post, "/recovery/sessions", operation: operation, purpose: purpose, body: body)
        let fields = try JSONBody.object(
            reply, required: ["sessionId", "plan", "custodianDealings", "custodianKey"], operation: operation)
        let sessionId = try fields.string("sessionId")
        guard (1...256).contains(sessionId.utf8.count) else {
            throw ShareRecoveryError(.malformedInput, "\(operation): sessionId must be 1…256 bytes")
        }
        if let chosen = request.sessionId, chosen != sessionId {
            throw ShareRecoveryError(.malformedInput, "\(operation): the server answered for another session id")
        }
        do {
            let plan = try SessionWire.decodePlan(try fields.value("plan"))
            let custodianKey = try fields.hex("custodianKey", count: 32)
            let dealings = try fields.array("custodianDealings").map { (value) throws(ShareRecoveryError) -> Dealing in
                try SessionWire.decodeDealing(value, curve: plan.oldSet.curve, openingWith: sessionKey)
            }
            await sessions.insert(
                Session(purpose: purpose, sessionKey: sessionKey, custodianKey: custodianKey, plan: plan), id: sessionId
            )
            return ResharingSessionOffer(sessionId: sessionId, plan: plan, custodianDealings: dealings)
        } catch {
            // The server holds a session we cannot use; let it go.
            await abandon(sessionId, purpose: purpose)
            throw error
        }
    }

    /// `POST /recovery/sessions/{id}/finish`: sends the client's dealing with each sub-share for a
    /// custodian party sealed to the session's `custodianKey`.
    /// - Parameters:
    ///   - id: The session id.
    ///   - clientDealing: The client's dealing, without the client's own sub-share.
    /// - Returns: The custodian's new commitments and, for a backup, its backup shares (§6 JSON,
    ///   each checked to parse).
    /// - Throws: `ShareRecoveryError`; `notFound` for a session this client did not open.
    public func finishSession(id: String, clientDealing: Dealing) async throws -> ResharingSessionResult {
        guard let session = await sessions.session(id) else {
            throw ShareRecoveryError(.notFound, "no open resharing session with this id")
        }
        let plan = session.plan
        let clientIndex = plan.oldSet.partyIndex
        var recipients: [Int: [UInt8]] = [:]
        for party in 1...plan.newParties where party != clientIndex { recipients[party] = session.custodianKey }
        let dealing = try SessionWire.encode(clientDealing, sealingTo: recipients, using: random)
        let operation = "POST /recovery/sessions/{id}/finish"
        let reply = try await send(
            .post, "/recovery/sessions/\(try URLText.segment(id, field: "sessionId"))/finish", operation: operation,
            purpose: session.purpose, body: JSONBody.encode([("clientDealing", dealing)]))
        let fields = try JSONBody.object(
            reply, required: ["newCommitments"], optional: ["custodianBackupShares"], operation: operation)
        let commitments = try SessionWire.decodePoints(try fields.value("newCommitments"), curve: plan.oldSet.curve)
        let shares = fields.has("custodianBackupShares") ? try fields.stringArray("custodianBackupShares") : []
        for share in shares { _ = try CustodianBackupShare(json: share) }
        return ResharingSessionResult(newCommitments: commitments, custodianBackupShares: shares)
    }

    /// `POST /recovery/sessions/{id}/confirm` (no body): the server makes the new set current.
    /// - Parameter id: The session id.
    /// - Throws: `ShareRecoveryError`; `notFound` for a session this client did not open.
    public func confirmSession(id: String) async throws {
        guard let session = await sessions.session(id) else {
            throw ShareRecoveryError(.notFound, "no open resharing session with this id")
        }
        _ = try await send(
            .post, "/recovery/sessions/\(try URLText.segment(id, field: "sessionId"))/confirm",
            operation: "POST /recovery/sessions/{id}/confirm", purpose: session.purpose, body: nil)
        await sessions.remove(id)
    }

    /// `DELETE /recovery/sessions/{id}`, best effort: failures are logged, not thrown.
    /// - Parameter id: The session id.
    public func abortSession(id: String) async {
        guard let session = await sessions.remove(id) else { return }
        await abandon(id, purpose: session.purpose)
    }

    /// `DELETE /recovery/sessions/{id}` for a session this process may never have seen: 204 (deleted)
    /// and 404 (gone: the server keeps a confirmed session answerable for
    /// `confirmedSessionRetentionSeconds`, so a missing one was never confirmed) are
    /// `SessionSettlement.abandoned`; 409 (it was confirmed) is `SessionSettlement.confirmed`.
    /// - Parameter session: The session the device recorded; its purpose picks the token purpose.
    /// - Throws: ``TransportError`` when the server cannot be asked; nothing is decided then.
    public func settleSession(_ session: PendingSession) async throws -> SessionSettlement {
        await sessions.remove(session.sessionId)
        let purpose: TokenPurpose =
            switch session.purpose {
            case .backup: .addOrUpdateRecovery
            case .recovery: .recover
            case .refresh: .sign
            }
        do {
            _ = try await send(
                .delete, "/recovery/sessions/\(try URLText.segment(session.sessionId, field: "sessionId"))",
                operation: "DELETE /recovery/sessions/{id}", purpose: purpose, body: nil)
            return .abandoned
        } catch let error as ShareRecoveryError where error.code == .notFound {
            return .abandoned
        } catch let error as TransportError where error.code == .conflict {
            return .confirmed
        }
    }

    /// The base URL (credentials redacted); never a token.
    public var description: String { "HTTPCustodian(\(URLText.redacted(baseURL)), token: <redacted>)" }

    // MARK: Helpers

    private func abandon(_ id: String, purpose: TokenPurpose) async {
        do {
            _ = try await send(
                .delete, "/recovery/sessions/\(try URLText.segment(id, field: "sessionId"))",
                operation: "DELETE /recovery/sessions/{id}", purpose: purpose, body: nil)
        } catch {
            transport.logger.debug("abandoning a session failed", metadata: ["error": "\(error)"])
        }
    }

    private func send(
        _ method: HTTPCall.Method, _ path: String, operation: String, purpose: TokenPurpose, body: [UInt8]?
    )
        async throws -> HTTPReply
    {
        var call = HTTPCall(method: method, url: baseURL + path, operation: operation, body: body)
        call.headers.append(try await Credentials.bearer(tokenProvider, purpose, operation: operation))
        return try await transport.send(call)
    }
}

/// What the client keeps for one open session.
struct Session: Sendable {
    /// The token purpose of every call in the session.
    let purpose: TokenPurpose
    /// The client's ephemeral X25519 key pair for this session.
    let sessionKey: SealingKeyPair
    /// The server's ephemeral X25519 public key for this session.
    let custodianKey: [UInt8]
    /// The plan (its curve decodes points, its parties say whom to seal to).
    let plan: ResharingPlan
}

/// Open sessions by id; an entry is dropped on confirm or abort, and its key with it.
actor SessionTable {
    private var sessions: [String: Session] = [:]

    func insert(_ session: Session, id: String) { sessions[id] = session }
    func session(_ id: String) -> Session? { sessions[id] }
    @discardableResult func remove(_ id: String) -> Session? { sessions.removeValue(forKey: id) }
}
