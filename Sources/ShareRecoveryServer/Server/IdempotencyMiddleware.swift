import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery

/// Idempotent mutating requests (docs/server.md, "Idempotent requests"). A POST, PUT or DELETE that
/// carries `Idempotency-Key` is applied at most once per key:
///
/// - before the route runs, the key is only looked at: a request that changes nothing never writes it;
/// - the request's first write transaction takes the key in its own commit (a row *applied*, owned by
///   this request; ``IdempotencyClaim``); if another request with the key took it first, that
///   transaction rolls back and the request is answered as a repeat;
/// - if it committed a write transaction, its answer (any status but 429) is kept, sealed, for
///   ``ServerConfiguration/idempotencyRetentionSeconds``, and a repeat gets that answer with
///   `Idempotent-Replayed: true` and changes nothing; a repeat of a request that changed nothing
///   simply runs again;
/// - a repeat while the first still runs gets 409 `requestInProgress` (retry shortly); a key reused
///   for another method, path or body gets 422 `idempotencyKeyReused`.
///
/// Keys are scoped by the request's credentials (a keyed hash of its bearer token and webhook
/// secret), so one client's keys never meet another's; the fingerprint of method, path and body is
/// keyed too, because a body may hold a one-time code. Requests without the header behave as before.
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let state: ServerState

    static let header = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!
    private static let webhookSecretHeader = HTTPField.Name("X-Webhook-Secret")!
    private static let mutating: Set<HTTPRequest.Method> = [.post, .put, .delete, .patch]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        // A request no route took (404, or 405 from MethodNotAllowedMiddleware) applies nothing, and its
        // answer must not depend on whether its key was used before. The router names the route it took
        // before any middleware runs.
        guard Self.mutating.contains(request.method), context.endpointPath != nil else {
            return try await next(request, context)
        }
        let values = request.headers[values: Self.header]
        guard !values.isEmpty else { return try await next(request, context) }
        guard values.count == 1, let key = Self.validKey(values[0]) else {
            throw APIError.badRequest("Idempotency-Key must be one value of 1…255 visible ASCII characters")
        }
        var request = request
        let body = try await Self.collectBody(&request, limit: state.configuration.maximumBodySize)
        let now = try await state.now()
        let configuration = state.configuration
        let scopes = scopes(of: request)
        let fingerprints = fingerprints(of: request, body: body)
        let claim = IdempotencyClaim(
            scope: scopes[0], key: key, fingerprint: fingerprints[0],
            earlier: Array(zip(scopes, fingerprints).dropFirst()).map { (scope: $0.0, fingerprint: $0.1) },
            owner: Hex.encode(SystemRandom().bytes(count: 16)), now: now,
            leaseUntil: now + Int64(configuration.idempotencyLeaseSeconds),
            keepUntil: now + Int64(configuration.idempotencyRetentionSeconds))
        if let earlier = try await earlierAnswer(for: claim) { return earlier }

        var response: Response
        do {
            response = try await IdempotencyClaim.$current.withValue(claim) { try await next(request, context) }
        } catch {
            do {
                response = try ErrorMiddleware.response(for: error, path: request.uri.path, logger: state.logger)
            } catch {
                try? await state.storage.releaseIdempotencyKey(claim)
                throw error
            }
        }
        return try await keep(response, under: claim)
    }

    /// The answer a repeat gets when a request with this key changed something before (its kept
    /// answer, or an error saying why there is none yet), or `nil` when the key is free.
    private func earlierAnswer(for claim: IdempotencyClaim) async throws -> Response? {
        // During a master key rotation a process whose first master key differs wrote the key under
        // its own scope: each master key's scope is looked at, this process's first.
        var found: (scope: String, state: IdempotencyKeyState)?
        for lookup in [(scope: claim.scope, fingerprint: claim.fingerprint)] + claim.earlier {
            let keyState = try await state.storage.idempotencyKeyState(
                scope: lookup.scope, key: claim.key, fingerprint: lookup.fingerprint, now: claim.now)
            if case .free = keyState { continue }
            found = (lookup.scope, keyState)
            break
        }
        guard let found else { return nil }
        switch found.state {
        case .free: return nil
        case .replay(let status, let contentType, let sealedBody):
            return try replay(
                claim, scope: found.scope, status: status, contentType: contentType, sealedBody: sealedBody)
        case .mismatch:
            throw APIError(
                .unprocessableContent, .idempotencyKeyReused,
                "this Idempotency-Key was used for another request; use a new key for a new request")
        case .inProgress: throw APIError(StorageRefusal.idempotencyKeyTaken)
        case .answerLost:
            throw APIError(
                .conflict, .conflict,
                "a request with this Idempotency-Key was applied, but its answer was not kept; read the resource's state"
            )
        }
    }

    /// Keeps the answer if the request wrote its claim, and returns it. A 429 is never kept: its only
    /// change was a rate-limit counter, so its claim is freed. A refusal that is not kept may have lost
    /// a race with a repeat of itself, which took the key first (a spent token, a session already
    /// finished): then the repeat's answer is the one to give.
    private func keep(_ response: Response, under claim: IdempotencyClaim) async throws -> Response {
        guard claim.isWritten else {
            if response.status.code >= 400, let earlier = try await earlierAnswer(for: claim) { return earlier }
            return response
        }
        if response.status == .tooManyRequests {
            try await state.storage.releaseIdempotencyKey(claim)
            return response
        }
        var response = response
        let collector = BodyCollector()
        try await response.body.write(collector)
        let bytes = collector.bytes
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        let sealed = try state.sealer.seal(
            SecureBytes(copying: bytes), table: "idempotency_keys", row: [claim.scope, claim.key])
        let kept = try await state.storage.finishIdempotencyKey(
            claim, status: Int(response.status.code), contentType: response.headers[.contentType], sealedBody: sealed)
        // Not kept: the transaction that took the key rolled back, so the key may be a repeat's.
        if !kept, let earlier = try await earlierAnswer(for: claim) { return earlier }
        return response
    }

    private func replay(
        _ claim: IdempotencyClaim, scope: String, status: Int, contentType: String?, sealedBody: [UInt8]
    ) throws -> Response {
        let body = try state.sealer.open(sealedBody, table: "idempotency_keys", row: [scope, claim.key])
        var headers: HTTPFields = [Self.replayedHeader: "true"]
        if let contentType { headers[.contentType] = contentType }
        return Response(
            status: .init(code: status), headers: headers,
            body: ResponseBody(byteBuffer: body.withUnsafeBytes { ByteBuffer(bytes: $0) }))
    }

    /// Whose keys these are: a keyed hash of the credentials the request carries (none for the
    /// unauthenticated flow routes, whose answers are bound to their flow by the path), under each
    /// master key's idempotency key, the first's first.
    private func scopes(of request: Request) -> [String] {
        var material: [UInt8] = Array("scope".utf8)
        for name in [HTTPField.Name.authorization, Self.webhookSecretHeader] {
            material.append(0)
            for value in request.headers[values: name] { material += Array(value.utf8) + [0] }
        }
        return state.idempotencyKeys.map { key in
            HMACSHA256.authenticate(material, key: key).withUnsafeBytes { Hex.encode(Array($0)) }
        }
    }

    /// A keyed hash of what the request asks: method, path with query, body; under each master key's
    /// idempotency key, as ``scopes(of:)``.
    private func fingerprints(of request: Request, body: [UInt8]) -> [[UInt8]] {
        let material =
            Array("request".utf8) + [0] + Array(request.method.rawValue.utf8) + [0]
            + Array(request.uri.description.utf8) + [0] + body
        return state.idempotencyKeys.map { key in
            HMACSHA256.authenticate(material, key: key).withUnsafeBytes { Array($0) }
        }
    }

    /// 1…255 visible ASCII characters (RFC 9110 token-like; UUIDs and hex both fit).
    static func validKey(_ value: String) -> String? {
        let bytes = value.utf8
        guard (1...255).contains(bytes.count), bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return value
    }

    /// The body, bounded like every route's (413 beyond), kept in the request for the route to read.
    private static func collectBody(_ request: inout Request, limit: Int) async throws -> [UInt8] {
        if let declared = request.headers[.contentLength], let length = Int(declared), length > limit {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        }
        do {
            return Array(try await request.collectBody(upTo: limit).readableBytesView)
        } catch let error as HTTPParserError {
            throw error
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        } catch {
            throw APIError.badRequest("the request body could not be read")
        }
    }
}

/// Gathers a response body's bytes so that they can be kept and sent.
private final class BodyCollector: ResponseBodyWriter {
    private(set) var bytes: [UInt8] = []

    func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytesView }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
