import HTTPTypes
import ShareCrypto
import ShareRecovery

/// The custodian's side of adding a device to a wallet (docs/devices.md): one resharing of an
/// approving device's 2-of-2 set {device, custodian} into a new 2-of-2 set {new device, custodian}
/// (the engine's ``DeviceEnrolment``, whose custodian role is ``DeviceEnrolmentCustodian``), and the
/// removal of a device's set. The role's opened state and a session key stay sealed in
/// `protocol_sessions` between the approver's two calls.
struct DeviceSessions: ProtocolSessionKeeping {
    static let sessionKinds: Set<ProtocolSessionRecord.Kind> = [.deviceAdd]

    let state: ServerState
    var wallet: WalletSessions { WalletSessions(state: state) }

    // MARK: Add

    /// The custodian deals first: checks the approving set is current and the wallet has room, plans
    /// the new set, deals g_C and seals g_C(1) to the new device's key.
    /// - Returns: The 201 body: `sessionId`, `plan`, `custodianDealing` (its one sub-share sealed to
    ///   the new device), `custodianKey` (this session's key, for the approver's sub-share g_A(2)).
    func open(clientId: String, walletId: String, approvingSetId: String, deviceId: String, deviceKey: [UInt8])
        async throws
        -> JSONValue
    {
        // An ejected wallet's key has left: no device joins it (docs/eject.md).
        try await ProtocolSessionKeeper(state: state, kind: .deviceAdd).open(clientId: clientId, walletId: walletId) {
            () async throws -> SessionOpening in
            let approving = try await approvingShare(clientId: clientId, walletId: walletId, setId: approvingSetId)
            let maximum = state.configuration.maximumDevicesPerWallet
            try await state.storage.read { transaction in
                try await WalletDeviceRules.checkRoom(
                    clientId: clientId, deviceId: deviceId, maximum: maximum, in: transaction)
            }
            var newSetId = SetID.random()
            while newSetId == approving.setId { newSetId = SetID.random() }
            let sessionKey = SealingKeyPair()
            let (opened, offered) = try checkingClientInput {
                () throws -> (DeviceEnrolmentCustodian.Opened, JSONValue) in
                let opened = try DeviceEnrolmentCustodian.open(approvingSet: approving, newSetId: newSetId)
                return (
                    opened,
                    try SessionWire.encode(opened.offeredDealing, sealingTo: [DeviceEnrolment.deviceIndex: deviceKey])
                )
            }
            let plan = opened.plan
            return SessionOpening(
                binding: .object([
                    ("walletId", .string(walletId)), ("setId", .string(approvingSetId)),
                    ("deviceId", .string(deviceId)),
                    ("plan", SessionWire.encode(plan)), ("custodianDealing", offered),
                ]),
                secret: SecureBytes.concatenating([sessionKey.secretKey, opened.serialized()]),
                answer: [
                    ("plan", SessionWire.encode(plan)), ("custodianDealing", offered),
                    ("custodianKey", .string(Hex.encode(sessionKey.publicKey))),
                ])
        }
    }

    /// The approver's dealing: g_A(2) sealed to the session key is checked and combined into the
    /// custodian's new share; g_A(1), sealed to the new device, is kept for it with the custodian's
    /// dealing. Stored with `deviceAdded` in the transaction that ends the session.
    /// - Parameters:
    ///   - session: The open device-add session.
    ///   - approverDealing: The approver's dealing with only its sub-share for the custodian (party 2).
    ///   - deviceSubShare: g_A(1), sealed to the new device's key (opaque here).
    ///   - origin: The request.
    /// - Returns: The 200 body: `deviceId`, `setId`, `newCommitments`.
    func finish(
        _ session: ProtocolSessionRecord, approverDealing: JSONValue, deviceSubShare: String, origin: AuditOrigin
    )
        async throws -> JSONValue
    {
        guard session.state == .open else { throw APIError.conflict("this device-add session is finished") }
        let bound = try StrictJSON.parse(Array(session.publicJSON.utf8))
        guard case .string(let walletId) = try SessionWire.member(bound, "walletId"),
            case .string(let approvingSetId) = try SessionWire.member(bound, "setId"),
            case .string(let deviceId) = try SessionWire.member(bound, "deviceId")
        else { throw ShareRecoveryError(.storeCorrupted, "a device-add session's binding is unreadable") }
        let offered = try SessionWire.member(bound, "custodianDealing")
        // The approving set must still sign for the wallet (a device removed meanwhile approves nothing).
        _ = try await approvingShare(clientId: session.clientId, walletId: walletId, setId: approvingSetId)
        let secrets = try state.sealer.open(
            session.sealedState, table: "protocol_sessions", row: [session.id, session.kind.sealedStateLabel])
        guard secrets.count > 32 else {
            throw ShareRecoveryError(.storeCorrupted, "a device-add session's secrets are truncated")
        }
        let sessionKey = try SealingKeyPair(secretKey: try secrets.slice(0..<32))
        let opened = try DeviceEnrolmentCustodian.Opened(serialized: try secrets.slice(32..<secrets.count))
        let plan = opened.plan
        let custodianShare = try checkingClientInput { () throws -> ShareRecord in
            try opened.finish(
                approverDealing: try SessionWire.decodeDealing(
                    approverDealing, curve: plan.oldSet.curve, openingWith: sessionKey))
        }
        guard let sealedForDevice = Base64.decode(deviceSubShare), sealedForDevice.count == 32 + 16 + 32 else {
            throw APIError.badRequest("deviceSubShare must be canonical base64 of one sealed scalar")
        }
        let commitments = SessionWire.encode(points: custodianShare.commitments)
        let approverForDevice = JSONValue.object([
            ("dealerIndex", .number(String(DeviceEnrolment.deviceIndex))),
            ("commitments", try SessionWire.member(approverDealing, "commitments")),
            ("sealedSubShares", .object([(String(DeviceEnrolment.deviceIndex), .string(deviceSubShare))])),
        ])
        let enrolment = JSONValue.object([
            ("plan", SessionWire.encode(plan)), ("dealings", .array([approverForDevice, offered])),
            ("newCommitments", commitments),
        ])
        let setId = custodianShare.setId.hex
        let now = try await state.now()
        let device = StoredDevice(
            deviceId: deviceId, setId: setId, generation: custodianShare.generation, approvedBy: approvingSetId,
            sealedRecord: try state.sealer.seal(
                try custodianShare.binary(), table: "wallet_devices", row: [session.clientId, deviceId, setId]),
            enrolmentJSON: JSONWriter.write(enrolment), createdAt: now)
        let added = origin.event(.deviceAdded, account: session.clientId) {
            $0.sessionId = session.id
            $0.walletId = walletId
            $0.deviceId = deviceId
            $0.setId = setId
            $0.generation = custodianShare.generation
        }
        guard
            try await state.storage.completeDeviceAdd(
                sessionId: session.id, clientId: session.clientId, device: device,
                maximum: state.configuration.maximumDevicesPerWallet, now: now, added: added)
        else { throw APIError.conflict("this device-add session is finished") }
        return .object([("deviceId", .string(deviceId)), ("setId", .string(setId)), ("newCommitments", commitments)])
    }

    // MARK: Read and remove

    /// The new device's enrolment: the plan, both dealings with their sub-shares sealed to it, and
    /// the commitments the custodian stored (it combines and checks its share itself).
    func enrolment(clientId: String, deviceId: String) async throws -> JSONValue {
        guard let device = try await state.storage.walletDevice(clientId: clientId, deviceId: deviceId) else {
            throw APIError.notFound("the wallet has no device \(deviceId)")
        }
        let stored = try StrictJSON.parse(Array(device.enrolmentJSON.utf8))
        return .object([
            ("deviceId", .string(deviceId)), ("setId", .string(device.setId)),
            ("plan", try SessionWire.member(stored, "plan")),
            ("dealings", try SessionWire.member(stored, "dealings")),
            ("newCommitments", try SessionWire.member(stored, "newCommitments")),
        ])
    }

    /// The wallet's devices: the primary one (its set in `signing_shares`) first, then each added one.
    func list(clientId: String) async throws -> JSONValue {
        let primary = try await state.storage.signingShares(clientId: clientId)
        guard let first = primary.first else {
            throw APIError(.notFound, APIErrorCode(.noMatchingShare), "the custodian holds no wallet for this user")
        }
        let devices = try await state.storage.walletDevices(clientId: clientId)
        let rows: [JSONValue] =
            [
                .object([
                    ("deviceId", .string(WalletDeviceRules.primaryDeviceId)), ("setId", .string(first.setId)),
                    ("generation", .number(String(first.generation))),
                ])
            ]
            + devices.map {
                .object([
                    ("deviceId", .string($0.deviceId)), ("setId", .string($0.setId)),
                    ("generation", .number(String($0.generation))),
                    ("approvedBy", .string($0.approvedBy)), ("addedAt", .string(RFC3339.format($0.createdAt))),
                ])
            }
        return .object([
            ("devices", .array(rows)), ("maximumDevices", .number(String(state.configuration.maximumDevicesPerWallet))),
        ])
    }

    /// Deletes the custodian's share of an added device's set: that device's share alone signs nothing.
    func remove(clientId: String, deviceId: String, token: Token, origin: AuditOrigin) async throws {
        guard deviceId != WalletDeviceRules.primaryDeviceId else {
            throw APIError.conflict(
                "the primary device (the one that created or recovered the wallet) cannot be removed; recover the wallet on another device instead"
            )
        }
        let removed = origin.event(.deviceRemoved, account: clientId) { $0.deviceId = deviceId }
        switch try await state.storage.removeWalletDevice(
            clientId: clientId, deviceId: deviceId, token: token, removed: removed)
        {
        case .done: return
        case .notFound: throw APIError.notFound("the wallet has no device \(deviceId)")
        case .tokenSpent: throw APIError.unauthorized("the token was already used")
        }
    }

    // MARK: Shares

    /// The custodian's share of an added device's set, opened; `nil` when no device has that set.
    func custodianShare(clientId: String, setId: String) async throws -> ShareRecord? {
        guard let device = try await state.storage.walletDevice(clientId: clientId, setId: setId) else { return nil }
        let record = try ShareRecord(
            binary: try state.sealer.open(
                device.sealedRecord, table: "wallet_devices", row: [clientId, device.deviceId, setId]))
        guard record.setId.hex == setId, record.partyIndex == DeviceEnrolment.custodianIndex else {
            throw ShareRecoveryError(.storeCorrupted, "a device's signing share disagrees with its row")
        }
        return record
    }

    /// The custodian's share of the approving set: the primary set's or an added device's.
    private func approvingShare(clientId: String, walletId: String, setId: String) async throws -> ShareRecord {
        let primary = try await wallet.currentShare(clientId: clientId, walletId: walletId)
        if primary.setId.hex == setId { return primary }
        guard let share = try await custodianShare(clientId: clientId, setId: setId) else {
            throw APIError.conflict(
                "set \(setId.prefix(32)) no longer signs for this wallet (a removed device, or before a recovery): approve from a current device"
            )
        }
        return share
    }
}
