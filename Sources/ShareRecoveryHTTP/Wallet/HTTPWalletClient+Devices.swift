public import ShareCrypto
public import ShareRecovery

/// One device of a wallet, as the reference server lists it.
public struct WalletDevice: Sendable, Equatable {
    /// The device's id; `primary` for the device that created or recovered the wallet.
    public let deviceId: String
    /// The device's signing set (32 lowercase hex digits).
    public let setId: String
    /// The set's generation.
    public let generation: UInt32
    /// The set of the device that approved it (`nil` for the primary device).
    public let approvedBy: String?
}

/// A wallet's devices against the reference server's `/wallets/devices` (docs/devices.md): an
/// approving device adds a new one by resharing its own 2-of-2 set with the custodian into a new
/// 2-of-2 set {new device, custodian} of the same key (the engine's ``DeviceEnrolment``); the new
/// device combines its share from sub-shares sealed to its own key; any device lists and removes.
///
/// Tokens: `addDevice` to add (both devices), `removeDevice` to remove (single use), `sign` to list.
/// The server's user is the token's.
extension HTTPWalletClient {
    /// The approving device's side: adds `deviceId` with the new device's sealing key. The approver
    /// seals its sub-share for the new device to `deviceKey`, so it never holds the new share, and
    /// checks that the custodian's dealing keeps the wallet key.
    /// - Parameters:
    ///   - share: The approving device's signing share (party 1 of a current 2-of-2 set), with its secret.
    ///   - clientId: The user.
    ///   - deviceId: The new device's id (1…64 of `A–Z a–z 0–9 . _ -`).
    ///   - deviceKey: The new device's X25519 public key (32 bytes), received from it out of band.
    ///   - random: The approver's random source.
    /// - Returns: The new device as the server stored it.
    /// - Throws: `ShareRecoveryError`: `invalidParameters` for a plan that is not an enrolment from this
    ///   set; `dealerCheckFailed` or `publicKeyMismatch` (party 2) when the custodian's dealing or
    ///   result does not keep the key; the transport's errors (`conflict` for a device id in use or an
    ///   approving set that no longer signs, `deviceLimitReached` at the server's limit).
    public func approveDevice(
        share: ShareRecord, clientId: String, deviceId: String, deviceKey: [UInt8],
        using random: some RandomSource = SystemRandom()
    ) async throws -> WalletDevice {
        guard deviceKey.count == 32 else {
            throw ShareRecoveryError(.invalidParameters, "the new device's key must be 32 bytes")
        }
        var operation = "POST /wallets/device-sessions"
        var reply = try await send(
            .post, "/wallets/device-sessions", operation: operation, purpose: .addDevice,
            body: [
                ("clientId", .string(clientId)), ("walletId", .string(share.walletId)),
                ("setId", .string(share.setId.hex)),
                ("deviceId", .string(deviceId)), ("deviceKey", .string(Hex.encode(deviceKey))),
            ])
        var fields = try JSONBody.object(
            reply, required: ["sessionId", "plan", "custodianDealing", "custodianKey"], operation: operation)
        let sessionId = try URLText.segment(try fields.string("sessionId"), field: "sessionId")
        let plan = try SessionWire.decodePlan(try fields.value("plan"))
        let custodianKey = try fields.hex("custodianKey", count: 32)
        let offered = try StrictObject(
            try fields.value("custodianDealing"), required: ["dealerIndex", "commitments", "sealedSubShares"],
            failure: .malformedInput,
            context: "\(operation): ")
        guard
            try offered.integer("dealerIndex", maximum: 255, rangeFailure: .malformedInput)
                == DeviceEnrolment.custodianIndex
        else {
            throw ShareRecoveryError(
                .dealerCheckFailed, "\(operation): the custodian's dealing is not dealer 2's", party: 2)
        }
        let custodianCommitments = try SessionWire.decodePoints(
            try offered.value("commitments"), curve: plan.oldSet.curve)
        let (dealing, newCommitments) = try DeviceEnrolment.approve(
            plan: plan, custodianCommitments: custodianCommitments, approverShare: share, using: random)
        guard let forDevice = dealing.subShares[DeviceEnrolment.deviceIndex],
            let forCustodian = dealing.subShares[DeviceEnrolment.custodianIndex]
        else { throw ShareRecoveryError(.invalidParameters, "the approver's dealing lacks a sub-share") }
        let toCustodian = try SessionWire.encode(
            Dealing(
                dealerIndex: dealing.dealerIndex, commitments: dealing.commitments,
                subShares: [DeviceEnrolment.custodianIndex: forCustodian]),
            sealingTo: [DeviceEnrolment.custodianIndex: custodianKey], using: random)
        let sealedForDevice = try mappingCryptoErrors {
            try SealedBox.seal(forDevice.rawRepresentation, to: deviceKey, using: random)
        }

        operation = "POST /wallets/device-sessions/{id}/finish"
        reply = try await send(
            .post, "/wallets/device-sessions/\(sessionId)/finish", operation: operation, purpose: .addDevice,
            body: [
                ("dealing", toCustodian), ("deviceSubShare", .string(Base64.encode(sealedForDevice))),
            ])
        fields = try JSONBody.object(reply, required: ["deviceId", "setId", "newCommitments"], operation: operation)
        let stored = try SessionWire.decodePoints(try fields.value("newCommitments"), curve: plan.oldSet.curve)
        guard try fields.string("setId") == plan.newSetId.hex, stored == newCommitments,
            try fields.string("deviceId") == deviceId
        else {
            throw ShareRecoveryError(
                .publicKeyMismatch, "\(operation): the custodian stored another set for the new device; remove it",
                party: 2)
        }
        return WalletDevice(
            deviceId: deviceId, setId: plan.newSetId.hex, generation: plan.newGeneration, approvedBy: share.setId.hex)
    }

    /// The new device's side, once approved: combines its share from the two dealings' sub-shares
    /// sealed to `keyPair`, checks it against every commitment and against the custodian's.
    /// - Parameters:
    ///   - deviceId: This device's id, as the approver named it.
    ///   - keyPair: The sealing key pair whose public key the approver was given.
    ///   - walletPublicKey: The wallet key this device expects (out of band), or `nil` to take the server's.
    /// - Returns: This device's signing share (party 1 of its own set).
    /// - Throws: `ShareRecoveryError`: `unsealFailed` when the sub-shares are sealed to another key;
    ///   `dealerCheckFailed`, `subShareCheckFailed`, `publicKeyMismatch` for a dealing or result that
    ///   does not verify or is of another wallet; the transport's errors (`notFound` before approval).
    public func joinDevice(deviceId: String, keyPair: SealingKeyPair, walletPublicKey: Point? = nil) async throws
        -> ShareRecord
    {
        let operation = "GET /wallets/devices/{deviceId}/enrolment"
        let segment = try URLText.segment(deviceId, field: "deviceId")
        let reply = try await send(
            .get, "/wallets/devices/\(segment)/enrolment", operation: operation, purpose: .addDevice, body: nil)
        let fields = try JSONBody.object(
            reply, required: ["deviceId", "setId", "plan", "dealings", "newCommitments"], operation: operation)
        let plan = try SessionWire.decodePlan(try fields.value("plan"))
        if let walletPublicKey, plan.oldSet.publicKey != walletPublicKey {
            throw ShareRecoveryError(
                .publicKeyMismatch, "\(operation): the enrolment is for another wallet key", party: 2)
        }
        let dealings = try fields.array("dealings").map { (value) throws(ShareRecoveryError) -> Dealing in
            try SessionWire.decodeDealing(value, curve: plan.oldSet.curve, openingWith: keyPair)
        }
        let newCommitments = try SessionWire.decodePoints(try fields.value("newCommitments"), curve: plan.oldSet.curve)
        let share = try DeviceEnrolment.join(plan: plan, dealings: dealings, newCommitments: newCommitments)
        guard try fields.string("setId") == share.setId.hex else {
            throw ShareRecoveryError(.publicKeyMismatch, "\(operation): the enrolment names another set", party: 2)
        }
        return share
    }

    /// The wallet's devices, the primary one first.
    /// - Returns: The devices and the server's limit per wallet.
    /// - Throws: The transport's errors (`noMatchingShare` when the user has no wallet).
    public func devices() async throws -> (devices: [WalletDevice], maximum: Int) {
        let operation = "GET /wallets/devices"
        let reply = try await send(.get, "/wallets/devices", operation: operation, purpose: .sign, body: nil)
        let fields = try JSONBody.object(reply, required: ["devices", "maximumDevices"], operation: operation)
        let devices = try fields.array("devices").map { (value) throws(ShareRecoveryError) -> WalletDevice in
            let row = try StrictObject(
                value, required: ["deviceId", "setId", "generation"], optional: ["approvedBy", "addedAt"],
                failure: .malformedInput,
                context: "\(operation): ")
            return WalletDevice(
                deviceId: try row.string("deviceId"), setId: try row.string("setId"),
                generation: UInt32(
                    try row.integer("generation", maximum: UInt64(UInt32.max), rangeFailure: .malformedInput)),
                approvedBy: try row.optionalString("approvedBy"))
        }
        return (
            devices,
            Int(try fields.integer("maximumDevices", maximum: UInt64(Int32.max), rangeFailure: .malformedInput))
        )
    }

    /// Removes a device: the custodian deletes its share of that device's set, so the device's own
    /// share signs nothing from then on. The other devices keep signing under the same key.
    /// - Parameter deviceId: The device to remove (not `primary`).
    /// - Throws: The transport's errors (`notFound` for no such device, `conflict` for the primary one).
    public func removeDevice(deviceId: String) async throws {
        let operation = "DELETE /wallets/devices/{deviceId}"
        let segment = try URLText.segment(deviceId, field: "deviceId")
        _ = try await send(
            .delete, "/wallets/devices/\(segment)", operation: operation, purpose: .removeDevice, body: nil)
    }

    private func send(
        _ method: HTTPCall.Method, _ path: String, operation: String, purpose: TokenPurpose,
        body: [(key: String, value: JSONValue)]?
    ) async throws -> HTTPReply {
        try await send(path, operation: operation, body: body.map(JSONBody.encode), method: method, purpose: purpose)
    }
}
