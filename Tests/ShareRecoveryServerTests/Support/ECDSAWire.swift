import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// The device's side of `/wallets/ecdsa` spelled out request by request through ``TestWorld/send``
/// (every answer checked against the OpenAPI document), with the engine's own roles doing the
/// protocol; a test can change a message on its way.
enum ECDSAWire {
    /// The members naming the device's set.
    static func binding(_ share: ShareRecord, userId: String, generation: UInt32? = nil)
        -> [(key: String, value: JSONValue)]
    {
        [
            ("clientId", .string(userId)), ("walletId", .string(share.walletId)), ("setId", .string(share.setId.hex)),
            ("generation", .number(String(generation ?? share.generation))),
        ]
    }

    /// Opens a pair setup with the engine's party; the raw answer.
    static func openPairSetup(
        world: TestWorld, share: ShareRecord, userId: String, token: String, generation: UInt32? = nil
    ) async throws -> APIResponse {
        let party = try PairSetupParty(share: share, peer: 2)
        return try await world.send(
            .POST, "/wallets/ecdsa/pair-setups",
            json: .object(
                binding(share, userId: userId, generation: generation) + [
                    ("round1", .string(Base64.encode(party.round1Message)))
                ]), headers: world.bearer(token))
    }

    /// A whole pair setup over the wire; the device's side.
    static func makePairSetup(world: TestWorld, share: ShareRecord, userId: String, token: String) async throws
        -> PairSetup
    {
        let party = try PairSetupParty(share: share, peer: 2)
        let opened = try await world.send(
            .POST, "/wallets/ecdsa/pair-setups",
            json: .object(binding(share, userId: userId) + [("round1", .string(Base64.encode(party.round1Message)))]),
            headers: world.bearer(token))
        try #require(opened.status == 201, "\(opened.text)")
        let sessionId = try #require(opened.string("sessionId"))
        let custodian1 = try #require(opened.string("round1").flatMap(Base64.decode))
        let custodian2 = try #require(opened.string("round2").flatMap(Base64.decode))
        let round2 = try party.round2(peerMessage: custodian1)
        let setup = try party.finish(peerMessage: custodian2)
        let finished = try await world.send(
            .POST, "/wallets/ecdsa/pair-setups/\(sessionId)/finish",
            json: .object([("round2", .string(Base64.encode(round2)))]), headers: world.bearer(token))
        try #require(finished.status == 200, "\(finished.text)")
        return setup
    }

    /// Opens a signing session with the engine's party (round 1); the party and the raw answer.
    static func open(
        world: TestWorld, share: ShareRecord, setup: PairSetup, userId: String, token: String, digest: [UInt8],
        server: Int = 0
    ) async throws -> (ECDSASigningParty, APIResponse) {
        let party = try ECDSASigningParty(share: share, signers: [1, 2], setups: [setup], digest: digest)
        let opened = try await world.send(
            .POST, "/wallets/ecdsa/signing-sessions",
            json: .object(
                binding(share, userId: userId) + [
                    ("digest", .string(Hex.encode(digest))),
                    ("round1", .string(Base64.encode(try party.round1()[2] ?? []))),
                ]), headers: world.bearer(token), server: server)
        return (party, opened)
    }

    /// One signature round by round. `tamperRound2` flips a bit of a τ value in the device's round-2
    /// message (docs/ecdsa.md "Signing": τ starts at byte 196). Returns every answer, in order, up to
    /// the first that is not a success.
    static func sign(
        world: TestWorld, share: ShareRecord, setup: PairSetup, userId: String, token: String, digest: [UInt8],
        tamperRound2: Bool = false, replay: Bool = false
    ) async throws -> [APIResponse] {
        let (party, opened) = try await open(
            world: world, share: share, setup: setup, userId: userId, token: token, digest: digest)
        guard opened.status == 201, let sessionId = opened.string("sessionId"),
            let custodian1 = opened.string("round1").flatMap(Base64.decode)
        else { return [opened] }
        var round2 = try party.round2([2: custodian1])[2] ?? []
        if tamperRound2 { round2[196 + 31] ^= 1 }
        var answers = [opened]
        // Sends the device's message of `round` (twice with `replay`); the custodian's answer to it.
        func post(_ round: String, _ message: [UInt8]) async throws -> [UInt8]? {
            let body = JSONValue.object([(round, .string(Base64.encode(message)))])
            let path = "/wallets/ecdsa/signing-sessions/\(sessionId)/\(round)"
            let first = try await world.send(.POST, path, json: body, headers: world.bearer(token))
            answers.append(first)
            if replay { answers.append(try await world.send(.POST, path, json: body, headers: world.bearer(token))) }
            return first.status == 200 ? first.string(round).flatMap(Base64.decode) : nil
        }
        guard let custodian2 = try await post("round2", round2) else { return answers }
        let broadcast = try party.round3([2: custodian2])
        guard let custodian3 = try await post("round3", broadcast),
            let third = answers.last(where: { $0.status == 200 })
        else { return answers }
        let signature = try party.signature([1: broadcast, 2: custodian3])
        #expect(third.string("signature") == Hex.encode(signature.recoverable))
        return answers
    }

    /// An ECDSA signing session as the server keeps it in `protocol_sessions`.
    struct StoredSigningSession: Sendable, Equatable {
        let id: String
        let clientId: String
        /// `open`, `finished` (after round 2) or `done`.
        let state: String
        /// The sealed round state's length: 0 once the session is done.
        let sealedStateCount: Int
        /// The digest the session signs, hex.
        let digest: String
    }

    /// Every ECDSA signing session the server keeps, of one user when `userId` is given.
    static func signingSessions(world: TestWorld, userId: String? = nil) async throws -> [StoredSigningSession] {
        let storage = try world.inspector()
        do {
            let rows = try await storage.read { transaction in
                try await transaction.query(
                    "SELECT id, client_id, state, sealed_state, public_json FROM protocol_sessions WHERE protocol = 'ecdsaSigning'",
                    [])
            }
            await storage.close()
            return try rows.map { row in
                guard
                    case .string(let digest)? = try StrictJSON.parse(Array(try row.text("public_json").utf8))["digest"]
                else { throw ShareRecoveryError(.storeCorrupted, "an ECDSA session without its digest") }
                return StoredSigningSession(
                    id: try row.text("id"), clientId: try row.text("client_id"), state: try row.text("state"),
                    sealedStateCount: try row.blob("sealed_state").count, digest: digest)
            }.filter { userId == nil || $0.clientId == userId }
        } catch {
            await storage.close()
            throw error
        }
    }

    /// The session ids of the audit rows of `event` (`ecdsaSigned`, `ecdsaAborted`), of one user when given.
    static func auditedSessions(world: TestWorld, event: String, userId: String? = nil) async throws -> [String] {
        try await world.auditRows().filter { $0.event == event && (userId == nil || $0.account == userId) }.map {
            row in
            guard case .string(let id)? = try StrictJSON.parse(Array(row.detail.utf8))["sessionId"] else {
                throw ShareRecoveryError(.storeCorrupted, "an \(event) row without its sessionId")
            }
            return id
        }
    }

    /// The custodian's kept pair setups of a user: set id → generation.
    static func keptSetups(world: TestWorld, userId: String) async throws -> [String: Int64] {
        let storage = try world.inspector()
        do {
            let rows = try await storage.transaction { transaction in
                try await transaction.query(
                    "SELECT set_id, generation FROM ecdsa_pair_setups WHERE client_id = ?", .text(userId))
            }
            await storage.close()
            var kept: [String: Int64] = [:]
            for row in rows { kept[try row.text("set_id")] = try row.integer("generation") }
            return kept
        } catch {
            await storage.close()
            throw error
        }
    }
}
