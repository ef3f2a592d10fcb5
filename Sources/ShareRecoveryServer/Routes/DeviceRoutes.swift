import Hummingbird
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// A wallet's devices (docs/devices.md): adding one by resharing from an approving device's set
/// (tokens of purpose `addDevice`), listing them, and removing one (a single-use `removeDevice` token).
extension ServerRoutes {
    var deviceSessions: DeviceSessions { DeviceSessions(state: state) }

    /// Mounted at `/wallets`, beside ``walletRoutes``.
    var deviceRoutes: RouteCollection<ServerRequestContext> {
        let routes = RouteCollection(context: ServerRequestContext.self)
        routes.post("device-sessions") { request, context in try await openDeviceAdd(request, context) }
        routes.post("device-sessions/:sessionId/finish") { request, context in
            try await finishDeviceAdd(request, context)
        }
        routes.get("devices") { request, context in try await listDevices(request, context) }
        routes.get("devices/:deviceId/enrolment") { request, context in try await deviceEnrolment(request, context) }
        routes.delete("devices/:deviceId") { request, context in try await removeDevice(request, context) }
        return routes
    }

    /// `POST /wallets/device-sessions` `{"clientId", "walletId", "setId", "deviceId", "deviceKey"}` → 201
    /// with the plan, the custodian's dealing (its sub-share sealed to `deviceKey`) and a session key.
    func openDeviceAdd(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["clientId", "walletId", "setId", "deviceId", "deviceKey"])
        let clientId = try body.identifier("clientId")
        _ = try await token(request, userId: clientId, purposes: [.addDevice])
        let setId = try body.string("setId")
        guard setId.utf8.count == 32, Hex.decode(setId) != nil else {
            throw APIError.badRequest("setId must be 32 lowercase hex digits")
        }
        guard let deviceKey = Hex.decode(try body.string("deviceKey")), deviceKey.count == 32 else {
            throw APIError.badRequest("deviceKey must be 64 lowercase hex digits (the new device's X25519 public key)")
        }
        let answer = try await deviceSessions.open(
            clientId: clientId, walletId: try body.identifier("walletId"), approvingSetId: setId,
            deviceId: try Self.deviceId(try body.string("deviceId")), deviceKey: deviceKey)
        return JSONResponse.json(answer, status: .created)
    }

    /// `POST /wallets/device-sessions/{id}/finish` `{"dealing", "deviceSubShare"}` → 200 with the new
    /// device's `deviceId`, `setId` and `newCommitments`.
    func finishDeviceAdd(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await verifiedToken(request)
        let id = try RequestReading.issuedIdentifier(context, "sessionId", what: "session")
        guard let session = try await state.storage.protocolSession(id: id, kind: .deviceAdd, now: state.now()) else {
            throw APIError.notFound("no such session")
        }
        guard token.userId == session.clientId else { throw APIError.forbidden("the token is for another user") }
        guard token.purpose == .addDevice else {
            throw APIError.forbidden(
                "adding a device needs a token of purpose addDevice; this one is for \(token.purpose.rawValue)")
        }
        let body = try await RequestReading.jsonObject(request, limit: limit)
        try body.expect(required: ["dealing", "deviceSubShare"])
        guard let dealing = body.member("dealing") else { throw APIError.badRequest("missing dealing") }
        return JSONResponse.json(
            try await deviceSessions.finish(
                session, approverDealing: dealing, deviceSubShare: try body.string("deviceSubShare"),
                origin: origin(context)))
    }

    /// `GET /wallets/devices` → 200 `{"devices", "maximumDevices"}` for the token's user (any wallet purpose).
    func listDevices(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await token(request, userId: nil, purposes: [.sign, .addDevice, .removeDevice])
        try await RequestReading.emptyBody(request, limit: limit)
        return JSONResponse.json(try await deviceSessions.list(clientId: token.userId))
    }

    /// `GET /wallets/devices/{deviceId}/enrolment` → 200: what the new device combines its share from.
    func deviceEnrolment(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await token(request, userId: nil, purposes: [.addDevice])
        let deviceId = try Self.deviceId(try RequestReading.pathParameter(context, "deviceId"))
        try await RequestReading.emptyBody(request, limit: limit)
        return JSONResponse.json(try await deviceSessions.enrolment(clientId: token.userId, deviceId: deviceId))
    }

    /// `DELETE /wallets/devices/{deviceId}` → 204; single use of a `removeDevice` token.
    func removeDevice(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let token = try await token(request, userId: nil, purposes: [.removeDevice])
        let deviceId = try Self.deviceId(try RequestReading.pathParameter(context, "deviceId"))
        try await RequestReading.emptyBody(request, limit: limit)
        try await deviceSessions.remove(
            clientId: token.userId, deviceId: deviceId, token: token, origin: origin(context))
        return JSONResponse.noContent()
    }

    /// A device id: 1…64 of `A–Z a–z 0–9 . _ -`, so it is safe in a path.
    static func deviceId(_ text: String) throws(APIError) -> String {
        guard (1...64).contains(text.utf8.count),
            text.utf8.allSatisfy({
                $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            })
        else { throw APIError.badRequest("deviceId must be 1…64 characters of A–Z, a–z, 0–9, '.', '_' or '-'") }
        return text
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
