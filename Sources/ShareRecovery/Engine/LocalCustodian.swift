public import ShareCrypto

/// The custodian role in process: holds the custodian's signing shares and X25519 key, fetches
/// backup shares through a ``CustodianShareSource``. For tests, demos and offline kits; the reference
/// server runs the same steps behind HTTP.
public actor LocalCustodian: Custodian {
    private struct Session {
        let clientId: String
        let purpose: ResharingSessionRequest.Purpose
        let plan: ResharingPlan
        let dealings: [Dealing]
        var newShares: [ShareRecord] = []
    }

    private let key: SealingKeyPair
    private let shareSource: any CustodianShareSource
    private let random: any RandomSource
    /// The custodian's current signing shares per client (parties 2…n of the signing set).
    private var signingShares: [String: [ShareRecord]] = [:]
    private var sessions: [String: Session] = [:]
    /// Ids of confirmed sessions: confirming one again succeeds, as on the reference server.
    private var confirmed: Set<String> = []

    /// - Parameters:
    ///   - key: The custodian's X25519 key pair (opens sealed backup shares).
    ///   - shareSource: Where the client's custodian backup shares come from.
    ///   - random: The random source.
    public init(key: SealingKeyPair, shareSource: any CustodianShareSource, random: any RandomSource = SystemRandom()) {
        self.key = key
        self.shareSource = shareSource
        self.random = random
    }

    /// Gives the custodian its signing share(s) of a client's set (after key generation).
    public func register(signingShares shares: [ShareRecord], clientId: String) {
        signingShares[clientId] = shares
    }

    /// The custodian's current signing shares for a client.
    public func currentSigningShares(clientId: String) -> [ShareRecord] { signingShares[clientId] ?? [] }

    public func openSession(_ request: ResharingSessionRequest) async throws -> ResharingSessionOffer {
        let client = request.clientShare
        let dealers: [ShareRecord]
        let newKind: SetKind
        let newGeneration: UInt32
        switch request.purpose {
        case .backup:
            // The caller's mistake, not missing custodian data: invalidParameters, as the reference server answers.
            guard client.kind == .signing else {
                throw ShareRecoveryError(
                    .invalidParameters, "a backup reshares a signing share; clientShare is a \(client.kind) share")
            }
            let own = (signingShares[request.clientId] ?? []).filter { $0.isSameSet(as: client) && $0.partyIndex != client.partyIndex }
            dealers = Array(own.sorted { $0.partyIndex < $1.partyIndex }.prefix(client.threshold - 1))
            guard dealers.count == client.threshold - 1 else {
                throw ShareRecoveryError(.noMatchingShare, "the custodian holds no signing share of this set")
            }
            newKind = .backup
            newGeneration = client.generation
        case .recovery(let method):
            let candidates = try await shareSource.fetchBackupShares(clientId: request.clientId)
            dealers = try CustodianShareSelector(custodianKey: key).select(for: client, method: method, candidates: candidates).get()
            newKind = .signing
            // One more than the newest signing generation the custodian knows (FORMATS.md §3).
            let newest = (signingShares[request.clientId] ?? []).map(\.generation).max() ?? client.generation
            guard max(newest, client.generation) < UInt32.max else {
                throw ShareRecoveryError(.invalidParameters, "the generation cannot be advanced")
            }
            newGeneration = max(newest, client.generation) + 1
        }
        var setId = SetID.random(using: random)
        while setId == client.setId { setId = SetID.random(using: random) }
        let plan = try ResharingPlan(
            oldSet: client, dealers: [client.partyIndex] + dealers.map(\.partyIndex), newThreshold: client.threshold,
            newParties: client.parties, newKind: newKind, newGeneration: newGeneration, newSetId: setId)
        let dealings = try dealers.map { try ResharingDealer.deal(share: $0, plan: plan, using: random) }
        let sessionId = Hex.encode(random.bytes(count: 16))
        sessions[sessionId] = Session(clientId: request.clientId, purpose: request.purpose, plan: plan, dealings: dealings)
        // The client receives only its own sub-share of each custodian dealing.
        let offered = dealings.map { dealing in
            Dealing(
                dealerIndex: dealing.dealerIndex, commitments: dealing.commitments,
                subShares: dealing.subShares.filter { $0.key == client.partyIndex })
        }
        return ResharingSessionOffer(sessionId: sessionId, plan: plan, custodianDealings: offered)
    }

    public func finishSession(id: String, clientDealing: Dealing) throws -> ResharingSessionResult {
        guard var session = sessions[id] else { throw ShareRecoveryError(.notFound, "no such resharing session") }
        let dealings = session.dealings + [clientDealing]
        let clientIndex = session.plan.oldSet.partyIndex
        let ownParties = (1...session.plan.newParties).filter { $0 != clientIndex }
        session.newShares = try ownParties.map { try ResharingReceiver.receive(partyIndex: $0, plan: session.plan, dealings: dealings) }
        sessions[id] = session
        var backupShares: [String] = []
        if case .backup(let method) = session.purpose {
            backupShares = try session.newShares.map {
                try CustodianBackupShare(sealing: $0, method: method, custodianPublicKey: key.publicKey, using: random).json
            }
        }
        return ResharingSessionResult(newCommitments: session.newShares[0].commitments, custodianBackupShares: backupShares)
    }

    public func confirmSession(id: String) throws {
        if confirmed.contains(id) { return }
        guard let session = sessions[id], !session.newShares.isEmpty else {
            throw ShareRecoveryError(.notFound, "no finished resharing session")
        }
        sessions[id] = nil
        if case .recovery = session.purpose {
            // Only the new signing set is kept: the old (lost device's) set is now useless.
            signingShares[session.clientId] = session.newShares
        }
        confirmed.insert(id)
    }

    public func abortSession(id: String) {
        sessions[id] = nil
    }
}
