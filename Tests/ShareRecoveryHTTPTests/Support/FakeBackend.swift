import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// A stand-in for the reference server, written from the API contract: the integrator backup API
/// and webhooks over an ``InMemoryIntegrator``, and the custodian session endpoints over a
/// ``LocalCustodian`` whose backup shares come back through ``HTTPCustodianShareSource``.
/// Tokens are the purpose names themselves, so the server can check which purpose a call used.
final class FakeBackend: Sendable {
    static let webhookSecret = "hook-secret"

    let integrator = InMemoryIntegrator()
    let custodian: LocalCustodian
    private let shareSource: DeferredShareSource
    private let sessions = FakeSessions()
    /// The `sealedSubShares` keys of every client dealing the custodian received.
    let sealedParties = Locked<[[String]]>([])

    init(custodianKey: SealingKeyPair, random: any RandomSource) {
        shareSource = DeferredShareSource()
        custodian = LocalCustodian(key: custodianKey, shareSource: shareSource, random: random)
    }

    /// Points the custodian's share source at this server's own webhooks once its port is known.
    func started(base: String) {
        shareSource.set(
            HTTPCustodianShareSource(
                webhookBaseURL: base + "/webhook", webhookSecret: SecureBytes(copying: Array(Self.webhookSecret.utf8))))
    }

    // MARK: Routes

    func register(on router: Router<BasicRequestContext>) {
        let resource = RouterPath("/users/:userId/user-backup-share")
        router.put(resource) { request, context in
            try await self.guarded(request, purposes: [.addOrUpdateRecovery]) {
                let body = try await Self.object(request)
                guard case .string(let text)? = body["cipherText"], body.count == 1 else {
                    return TestServer.error(.badRequest, code: "malformedInput")
                }
                let method = try Self.method(request)
                guard let envelope = try? CipherText(base64: text) else {
                    return TestServer.error(.badRequest, code: "malformedCipherText")
                }
                guard envelope.method == method else { return TestServer.error(.badRequest, code: "unsupportedMethod") }
                await self.integrator.storeCipherText(text, userId: try Self.userId(context), method: method)
                return Response(status: .noContent)
            }
        }
        router.get(resource) { request, context in
            try await self.guarded(request, purposes: [.recover]) {
                let text = try await self.integrator.fetchCipherText(
                    userId: try Self.userId(context), method: try Self.method(request))
                return TestServer.json(JSONWriter.write(.object([("cipherText", .string(text))])))
            }
        }
        router.delete(resource) { request, context in
            try await self.guarded(request, purposes: [.deleteRecovery]) {
                let userId = try Self.userId(context)
                let method = try Self.method(request)
                guard await self.integrator.storedMethods(userId: userId).contains(method) else {
                    return TestServer.error(.notFound, code: "notFound")
                }
                await self.integrator.deleteCipherText(userId: userId, method: method)
                return Response(status: .noContent)
            }
        }
        router.get("/users/:userId/recovery-methods") { request, context in
            try await self.guarded(request, purposes: Set(TokenPurpose.allCases)) {
                let methods = await self.integrator.storedMethods(userId: try Self.userId(context))
                return TestServer.json(
                    JSONWriter.write(.object([("methods", .array(methods.map { .string($0.apiName) }))])))
            }
        }
        router.post("/webhook/backup") { request, _ in
            try await self.webhook(request) { body in
                guard case .string(let clientId)? = body["clientId"], case .string(let share)? = body["backupShare"]
                else {
                    return TestServer.error(.badRequest, code: "malformedInput")
                }
                try await self.integrator.deliverBackupShare(share, clientId: clientId)
                return Response(status: .noContent)
            }
        }
        router.post("/webhook/backup/fetch") { request, _ in
            try await self.webhook(request) { body in
                guard case .string(let clientId)? = body["clientId"] else {
                    return TestServer.error(.badRequest, code: "malformedInput")
                }
                let shares = await self.integrator.fetchBackupShares(clientId: clientId)
                return TestServer.json(
                    JSONWriter.write(.object([("backupShares", .array(shares.map { .string($0) }))])))
            }
        }
        router.post("/webhook/backup/delete") { request, _ in
            try await self.webhook(request) { body in
                guard case .string(let clientId)? = body["clientId"], case .string(let name)? = body["backupMethod"],
                    let method = BackupMethod(apiName: name)
                else { return TestServer.error(.badRequest, code: "malformedInput") }
                await self.integrator.deleteBackupShares(clientId: clientId, method: method)
                return Response(status: .noContent)
            }
        }
        registerSessions(on: router)
    }

    private func registerSessions(on router: Router<BasicRequestContext>) {
        router.post("/recovery/sessions") { request, _ in
            let body = try await Self.object(request)
            guard case .string(let clientId)? = body["clientId"], case .string(let purposeName)? = body["purpose"],
                case .string(let methodName)? = body["backupMethod"], let method = BackupMethod(apiName: methodName),
                let shareValue = body["clientShare"], case .string(let clientKeyHex)? = body["clientKey"],
                let clientKey = Hex.decode(clientKeyHex), clientKey.count == 32,
                body.count == (body["sessionId"] == nil ? 5 : 6)
            else { return TestServer.error(.badRequest, code: "malformedInput") }
            var chosenId: String?
            if let value = body["sessionId"] {
                guard case .string(let text) = value else {
                    return TestServer.error(.badRequest, code: "malformedInput")
                }
                chosenId = text
            }
            let purpose: ResharingSessionRequest.Purpose = purposeName == "backup" ? .backup(method) : .recovery(method)
            let tokenPurpose: TokenPurpose = purposeName == "backup" ? .addOrUpdateRecovery : .recover
            return try await self.guarded(request, purposes: [tokenPurpose]) {
                let share = try ShareRecord(jsonValue: shareValue)
                let offer = try await self.custodian.openSession(
                    ResharingSessionRequest(
                        clientId: clientId, purpose: purpose, clientShare: share, sessionId: chosenId))
                let serverKey = SealingKeyPair()
                await self.sessions.insert(
                    offer.sessionId, .init(key: serverKey, curve: offer.plan.oldSet.curve, purpose: tokenPurpose))
                let dealings = try offer.custodianDealings.map {
                    try SessionWire.encode($0, sealingTo: [offer.plan.oldSet.partyIndex: clientKey])
                }
                let answer = JSONValue.object([
                    ("sessionId", .string(offer.sessionId)),
                    ("plan", SessionWire.encode(offer.plan)),
                    ("custodianDealings", .array(dealings)),
                    ("custodianKey", .string(Hex.encode(serverKey.publicKey))),
                ])
                return TestServer.json(JSONWriter.write(answer), status: .created)
            }
        }
        router.post("/recovery/sessions/:id/finish") { request, context in
            let id = try Self.parameter(context, "id")
            guard let session = await self.sessions.session(id) else {
                return TestServer.error(.notFound, code: "notFound")
            }
            return try await self.guarded(request, purposes: [session.purpose]) {
                let body = try await Self.object(request)
                guard let dealingValue = body["clientDealing"], body.count == 1,
                    case .object(let members) = try SessionWire.member(dealingValue, "sealedSubShares")
                else { return TestServer.error(.badRequest, code: "malformedInput") }
                self.sealedParties.withLock { $0.append(members.map(\.key)) }
                let dealing = try SessionWire.decodeDealing(
                    dealingValue, curve: session.curve, openingWith: session.key)
                let result = try await self.custodian.finishSession(id: id, clientDealing: dealing)
                var answer: [(key: String, value: JSONValue)] = [
                    ("newCommitments", SessionWire.encode(points: result.newCommitments))
                ]
                if session.purpose == .addOrUpdateRecovery {
                    answer.append(("custodianBackupShares", .array(result.custodianBackupShares.map { .string($0) })))
                }
                return TestServer.json(JSONWriter.write(.object(answer)))
            }
        }
        router.post("/recovery/sessions/:id/confirm") { request, context in
            let id = try Self.parameter(context, "id")
            guard let session = await self.sessions.session(id) else {
                return TestServer.error(.notFound, code: "notFound")
            }
            return try await self.guarded(request, purposes: [session.purpose]) {
                // As on the reference server, a confirmed session stays and confirms again (a retry after a lost answer).
                try await self.custodian.confirmSession(id: id)
                return Response(status: .noContent)
            }
        }
        router.delete("/recovery/sessions/:id") { request, context in
            let id = try Self.parameter(context, "id")
            guard let session = await self.sessions.session(id) else {
                return TestServer.error(.notFound, code: "notFound")
            }
            return try await self.guarded(request, purposes: [session.purpose]) {
                guard await !self.custodian.isConfirmed(id: id) else {
                    return TestServer.error(.conflict, code: "conflict")
                }
                await self.custodian.abortSession(id: id)
                await self.sessions.remove(id)
                return Response(status: .noContent)
            }
        }
    }

    // MARK: Helpers

    /// Checks the bearer token's purpose, runs the handler, and turns our errors into the API's error bodies.
    private func guarded(_ request: Request, purposes: Set<TokenPurpose>, _ body: () async throws -> Response)
        async throws
        -> Response
    {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let purpose = TokenPurpose(rawValue: String(header.dropFirst(7))), purposes.contains(purpose)
        else { return TestServer.error(.unauthorized, code: "unauthorized") }
        return try await Self.mappingErrors(body)
    }

    private func webhook(_ request: Request, _ body: ([String: JSONValue]) async throws -> Response) async throws
        -> Response
    {
        guard request.headers[.webhookSecret] == Self.webhookSecret else {
            return TestServer.error(.unauthorized, code: "unauthorized")
        }
        let object = try await Self.object(request)
        return try await Self.mappingErrors { try await body(object) }
    }

    private static func mappingErrors(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as ShareRecoveryError {
            // As the reference server: noMatchingShare is a 404, like notFound.
            let status: HTTPResponse.Status =
                error.code == .notFound || error.code == .noMatchingShare ? .notFound : .badRequest
            return TestServer.error(status, code: "\(error.code)")
        }
    }

    private static func object(_ request: Request) async throws -> [String: JSONValue] {
        guard case .object(let members) = try StrictJSON.parse(try await TestServer.body(request)) else {
            throw ShareRecoveryError(.malformedInput, "not an object")
        }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    private static func method(_ request: Request) throws -> BackupMethod {
        guard let name = request.uri.queryParameters["backupMethod"], let method = BackupMethod(apiName: String(name))
        else {
            throw ShareRecoveryError(.invalidParameters, "unknown backupMethod")
        }
        return method
    }

    private static func userId(_ context: BasicRequestContext) throws -> String { try parameter(context, "userId") }

    private static func parameter(_ context: BasicRequestContext, _ name: String) throws -> String {
        guard let raw = context.parameters.get(name), let value = raw.removingPercentEncoding else {
            throw ShareRecoveryError(.invalidParameters, "missing \(name)")
        }
        return value
    }
}

/// The server side of one session: its key, the curve, and the token purpose of its calls.
private actor FakeSessions {
    struct Entry: Sendable {
        let key: SealingKeyPair
        let curve: Curve
        let purpose: TokenPurpose
    }

    private var entries: [String: Entry] = [:]

    func insert(_ id: String, _ entry: Entry) { entries[id] = entry }
    func session(_ id: String) -> Entry? { entries[id] }
    func remove(_ id: String) { entries[id] = nil }
}

/// A share source whose HTTP endpoint is known only once the server runs.
private final class DeferredShareSource: CustodianShareSource {
    private let source = Locked<HTTPCustodianShareSource?>(nil)

    func set(_ source: HTTPCustodianShareSource) { self.source.withLock { $0 = source } }

    func fetchBackupShares(clientId: String) async throws -> [String] {
        guard let source = source.withLock({ $0 }) else { throw TransportError(.unavailable, "not started") }
        return try await source.fetchBackupShares(clientId: clientId)
    }
}
