import Foundation
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

/// The devices' side of `/wallets/device-sessions` and `/wallets/devices` request by request through
/// ``TestWorld/send`` (every answer checked against the OpenAPI document), with the engine's
/// ``DeviceEnrolment`` doing the protocol.
enum DeviceWire {
    /// The approver's two requests; returns the finish answer (200 on success).
    static func approve(
        world: TestWorld, approver: ShareRecord, userId: String, deviceId: String, deviceKey: [UInt8], token: String,
        server: Int = 0
    ) async throws -> APIResponse {
        let opened = try await open(
            world: world, approver: approver, userId: userId, deviceId: deviceId, deviceKey: deviceKey, token: token,
            server: server)
        guard opened.status == 201 else { return opened }
        let json = try #require(opened.json)
        let plan = try SessionWire.decodePlan(try #require(json["plan"]))
        let offered = try #require(json["custodianDealing"])
        let custodianCommitments = try SessionWire.decodePoints(
            try #require(offered["commitments"]), curve: plan.oldSet.curve)
        let keyText = try #require(opened.string("custodianKey"))
        let custodianKey = try #require(Hex.decode(keyText))
        let (dealing, newCommitments) = try DeviceEnrolment.approve(
            plan: plan, custodianCommitments: custodianCommitments, approverShare: approver)
        let toCustodian = try SessionWire.encode(
            Dealing(
                dealerIndex: 1, commitments: dealing.commitments, subShares: [2: try #require(dealing.subShares[2])]),
            sealingTo: [2: custodianKey])
        let forDevice = try SealedBox.seal(try #require(dealing.subShares[1]).rawRepresentation, to: deviceKey)
        let sessionId = try #require(opened.string("sessionId"))
        let finished = try await world.send(
            .POST, "/wallets/device-sessions/\(sessionId)/finish",
            json: .object([("dealing", toCustodian), ("deviceSubShare", .string(Base64.encode(forDevice)))]),
            headers: world.bearer(token), server: server)
        if finished.status == 200 {
            let stored = try SessionWire.decodePoints(
                try #require(finished.json?["newCommitments"]), curve: plan.oldSet.curve)
            #expect(stored == newCommitments, "the custodian stored the commitments the approver computed")
            #expect(finished.string("setId") == plan.newSetId.hex)
        }
        return finished
    }

    static func open(
        world: TestWorld, approver: ShareRecord, userId: String, deviceId: String, deviceKey: [UInt8], token: String,
        server: Int = 0
    ) async throws -> APIResponse {
        try await world.send(
            .POST, "/wallets/device-sessions",
            json: .object([
                ("clientId", .string(userId)), ("walletId", .string(approver.walletId)),
                ("setId", .string(approver.setId.hex)),
                ("deviceId", .string(deviceId)), ("deviceKey", .string(Hex.encode(deviceKey))),
            ]), headers: world.bearer(token), server: server)
    }

    /// The new device's read of its enrolment, and its share.
    static func join(world: TestWorld, deviceId: String, keyPair: SealingKeyPair, token: String, server: Int = 0)
        async throws
        -> ShareRecord
    {
        let response = try await world.send(
            .GET, "/wallets/devices/\(deviceId)/enrolment", headers: world.bearer(token), server: server)
        try #require(response.status == 200, "\(response.text)")
        let json = try #require(response.json)
        let plan = try SessionWire.decodePlan(try #require(json["plan"]))
        guard case .array(let values)? = json["dealings"] else {
            throw ShareRecoveryError(.malformedInput, "no dealings")
        }
        let dealings = try values.map {
            try SessionWire.decodeDealing($0, curve: plan.oldSet.curve, openingWith: keyPair)
        }
        let newCommitments = try SessionWire.decodePoints(
            try #require(json["newCommitments"]), curve: plan.oldSet.curve)
        return try DeviceEnrolment.join(plan: plan, dealings: dealings, newCommitments: newCommitments)
    }

    /// Approve and join: a new device's share.
    static func add(
        world: TestWorld, approver: ShareRecord, userId: String, deviceId: String, token: String, server: Int = 0
    )
        async throws -> ShareRecord
    {
        let key = SealingKeyPair()
        let finished = try await approve(
            world: world, approver: approver, userId: userId, deviceId: deviceId, deviceKey: key.publicKey,
            token: token, server: server)
        try #require(finished.status == 200, "\(finished.text)")
        return try await join(world: world, deviceId: deviceId, keyPair: key, token: token, server: server)
    }

    /// `GET /wallets/devices`: the device ids, the primary one first.
    static func list(world: TestWorld, token: String, server: Int = 0) async throws -> [String] {
        let response = try await world.send(.GET, "/wallets/devices", headers: world.bearer(token), server: server)
        try #require(response.status == 200, "\(response.text)")
        guard case .array(let rows)? = response.json?["devices"] else { return [] }
        return rows.compactMap { if case .string(let id)? = $0["deviceId"] { id } else { nil } }
    }

    static func remove(world: TestWorld, deviceId: String, token: String, server: Int = 0) async throws -> APIResponse {
        try await world.send(.DELETE, "/wallets/devices/\(deviceId)", headers: world.bearer(token), server: server)
    }
}
