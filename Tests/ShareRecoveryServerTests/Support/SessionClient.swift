import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The client side of a resharing session over HTTP: the engine's ``ResharingClient`` with every
/// check it makes, and SessionWire for the wire.
struct SessionClient {
    let world: TestWorld
    let clientId: String

    struct Opened {
        let sessionId: String
        let plan: ResharingPlan
        let custodianKey: [UInt8]
        /// The client's dealing as the custodian receives it (sub-shares for the custodian's parties).
        let ownDealing: Dealing
        let newShare: ShareRecord
    }

    /// Registers one of the custodian's signing shares, sealed to the server's custodian key.
    func register(_ share: ShareRecord, server: Int = 0) async throws {
        let keyText = try #require(try await world.send(.GET, "/custodian/key", server: server).string("publicKey"))
        let sealed = try SealedBox.seal(try share.binary(), to: try #require(Hex.decode(keyText)))
        let response = try await world.send(
            .POST, "/custodian/wallets",
            json: .object([("clientId", .string(clientId)), ("sealedShare", .string(Base64.encode(sealed)))]),
            headers: world.webhookHeaders, server: server)
        try #require(response.status == 204, "\(response.text)")
    }

    /// Opens a session and computes our own dealing and new share from the offer.
    /// - Parameter method: The backup method; `nil` for a refresh, which names none.
    func open(purpose: String, method: BackupMethod?, ownShare: ShareRecord, token: String, server: Int = 0)
        async throws -> Opened
    {
        let response = try await openResponse(
            purpose: purpose, method: method, ownShare: ownShare, token: token, server: server)
        try #require(response.status == 201, "\(response.text)")
        return try opened(response, ownShare: ownShare, refresh: purpose == "refresh")
    }

    /// - Parameters:
    ///   - sessionId: The id to ask for (a JSON value, so tests can send wrong ones), or `nil`.
    ///   - headers: Headers sent besides the bearer token (a `traceparent`).
    func openResponse(
        purpose: String, method: BackupMethod?, ownShare: ShareRecord, token: String, server: Int = 0,
        sessionId: JSONValue? = nil, headers: [(String, String)] = []
    ) async throws -> APIResponse {
        var members: [(key: String, value: JSONValue)] = [
            ("clientId", .string(clientId)), ("purpose", .string(purpose)),
        ]
        if let method { members.append(("backupMethod", .string(method.apiName))) }
        members += [
            ("clientShare", ownShare.jsonValue(includingSecret: false)),
            ("clientKey", .string(Hex.encode(Self.clientKey.publicKey))),
        ]
        if let sessionId { members.append(("sessionId", sessionId)) }
        return try await world.send(
            .POST, "/recovery/sessions", json: .object(members), headers: world.bearer(token) + headers, server: server)
    }

    /// One X25519 key for every session of the test process (only its public half goes to the server).
    static let clientKey = SealingKeyPair()

    func opened(_ response: APIResponse, ownShare: ShareRecord, refresh: Bool = false) throws -> Opened {
        let json = try #require(response.json)
        let plan = try SessionWire.decodePlan(try #require(json["plan"]))
        guard case .array(let offered)? = json["custodianDealings"], case .string(let sessionId)? = json["sessionId"],
            case .string(let keyText)? = json["custodianKey"], let custodianKey = Hex.decode(keyText)
        else { throw ShareRecoveryError(.malformedInput, "unexpected session offer") }
        let custodianDealings = try offered.map {
            try SessionWire.decodeDealing($0, curve: ownShare.curve, openingWith: Self.clientKey)
        }
        // A backup starts from the signing share, a recovery from the user backup share; a refresh
        // goes from the signing share to the next signing set.
        let dealt = try ResharingClient.accept(
            offer: ResharingSessionOffer(sessionId: sessionId, plan: plan, custodianDealings: custodianDealings),
            ownShare: ownShare, newKind: ownShare.kind == .signing && !refresh ? .backup : .signing)
        return Opened(
            sessionId: sessionId, plan: plan, custodianKey: custodianKey, ownDealing: dealt.outgoingDealing,
            newShare: dealt.newShare)
    }

    /// Our dealing for the server: the custodian's parties' sub-shares, sealed to the session key.
    func outgoing(_ opened: Opened, dealing: Dealing? = nil) throws -> JSONValue {
        let parties = (1...opened.plan.newParties).filter { $0 != opened.plan.oldSet.partyIndex }
        return try SessionWire.encode(
            dealing ?? opened.ownDealing,
            sealingTo: Dictionary(uniqueKeysWithValues: parties.map { ($0, opened.custodianKey) }))
    }

    func finish(_ opened: Opened, token: String, dealing: JSONValue? = nil, server: Int = 0) async throws -> APIResponse
    {
        try await world.send(
            .POST, "/recovery/sessions/\(opened.sessionId)/finish",
            json: .object([("clientDealing", try dealing ?? outgoing(opened))]),
            headers: world.bearer(token), server: server)
    }

    /// Hands the custodian backup shares of a finished backup to the integrator's webhook, as the
    /// device's app does before it confirms, each expected to answer 204.
    /// - Returns: How many there were (0 when the answer has none).
    @discardableResult
    func deliverBackupShares(of finished: APIResponse, server: Int = 0) async throws -> Int {
        guard case .array(let shares)? = finished.json?["custodianBackupShares"] else { return 0 }
        for case .string(let share) in shares {
            let delivered = try await world.send(
                .POST, "/webhook/backup",
                json: .object([("clientId", .string(clientId)), ("backupShare", .string(share))]),
                headers: world.webhookHeaders, server: server)
            #expect(delivered.status == 204, "\(delivered.text)")
        }
        return shares.count
    }

    func confirm(_ sessionId: String, token: String, server: Int = 0) async throws -> APIResponse {
        try await world.send(
            .POST, "/recovery/sessions/\(sessionId)/confirm", headers: world.bearer(token), server: server)
    }

    func abort(_ sessionId: String, token: String, server: Int = 0) async throws -> APIResponse {
        try await world.send(.DELETE, "/recovery/sessions/\(sessionId)", headers: world.bearer(token), server: server)
    }

    /// The set ids and generations of the custodian's stored signing shares.
    func storedSigningSets() async throws -> [String] {
        let storage = try world.inspector()
        defer { Task { await storage.close() } }
        let id = clientId
        return try await storage.transaction { transaction in
            try await transaction.query(
                "SELECT party_index, set_id, generation FROM signing_shares WHERE client_id = ? ORDER BY party_index",
                [.text(id)]
            ).map { "\(try $0.integer("party_index")):\(try $0.text("set_id")):\(try $0.integer("generation"))" }
        }
    }
}
