import Hummingbird
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery

/// Strict reading of request bodies, path parameters and query values.
enum RequestReading {
    /// The body, at most `limit` bytes (413 beyond, checked against `Content-Length` first).
    static func body(_ request: Request, limit: Int) async throws -> [UInt8] {
        if let declared = request.headers[.contentLength], let length = Int(declared), length > limit {
            throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
        }
        var bytes: [UInt8] = []
        do {
            for try await buffer in request.body {
                guard bytes.count + buffer.readableBytes <= limit else {
                    throw APIError(.contentTooLarge, .payloadTooLarge, "the request body exceeds \(limit) bytes")
                }
                bytes += buffer.readableBytesView
            }
        } catch let error as APIError {
            throw error
        } catch let error as HTTPParserError {
            throw error
        } catch {
            throw APIError.badRequest("the request body could not be read")
        }
        return bytes
    }

    /// The body as one strict JSON object (RFC 8259, no duplicate keys, valid UTF-8).
    static func jsonObject(_ request: Request, limit: Int) async throws -> JSONObject {
        let bytes = try await body(request, limit: limit)
        guard !bytes.isEmpty else { throw APIError.badRequest("the request needs a JSON body") }
        let value: JSONValue
        do {
            value = try StrictJSON.parse(bytes, maximumSize: limit)
        } catch {
            throw APIError.badRequest("the body is not acceptable JSON: \(error.description)")
        }
        return try JSONObject(value)
    }

    /// Reads and discards a body that the route does not use (still bounded), accepting nothing or `{}`.
    static func emptyBody(_ request: Request, limit: Int) async throws {
        let bytes = try await body(request, limit: limit)
        guard !bytes.isEmpty else { return }
        guard case .object(let members)? = try? StrictJSON.parse(bytes, maximumSize: limit), members.isEmpty else {
            throw APIError.badRequest("this request takes no body (or {})")
        }
    }

    /// A path parameter, percent-decoded strictly into UTF-8 of 1…255 bytes.
    static func pathParameter(_ context: some RequestContext, _ name: String) throws(APIError) -> String {
        guard let raw = context.parameters.get(name), let decoded = percentDecoded(raw),
            (1...255).contains(decoded.utf8.count),
            !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw APIError.badRequest("the path parameter \(name) must be 1…255 bytes of UTF-8 text")
        }
        return decoded
    }

    /// An identifier the server issued (flow and session ids: 32 lowercase hex digits); anything else names no
    /// resource.
    static func issuedIdentifier(_ context: some RequestContext, _ name: String, what: String) throws(APIError)
        -> String
    {
        guard let raw = context.parameters.get(name), raw.utf8.count == 32, Hex.decode(raw) != nil else {
            throw APIError.notFound("no such \(what)")
        }
        return raw
    }

    /// The `backupMethod` query value (`PASSWORD|PASSKEY|ICLOUD|GDRIVE|CUSTOM|RECOVERY_CODE`).
    static func backupMethodQuery(_ request: Request) throws(APIError) -> BackupMethod {
        let values = request.uri.queryParameters.getAll("backupMethod")
        guard values.count == 1 else {
            throw APIError.badRequest("exactly one backupMethod query parameter is required")
        }
        guard let method = BackupMethod(apiName: values[0]) else {
            throw APIError(
                .badRequest, APIErrorCode(.unsupportedMethod),
                "unknown backupMethod; expected one of \(BackupMethod.allCases.map(\.apiName).joined(separator: ", "))")
        }
        return method
    }

    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// One JSON object read exactly: required members present, optional ones possibly absent, nothing else.
struct JSONObject: Sendable {
    let value: JSONValue
    private let members: [String: JSONValue]

    init(_ value: JSONValue) throws(APIError) {
        guard case .object(let list) = value else { throw APIError.badRequest("the body must be a JSON object") }
        var members: [String: JSONValue] = [:]
        for (key, member) in list { members[key] = member }
        self.value = value
        self.members = members
    }

    /// Checks the member names.
    func expect(required: [String], optional: [String] = []) throws(APIError) {
        let allowed = Set(required + optional)
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.badRequest("unknown field \"\(unknown.prefix(64))\"")
        }
        if let missing = required.first(where: { members[$0] == nil }) {
            throw APIError.badRequest("missing field \"\(missing)\"")
        }
    }

    func member(_ key: String) -> JSONValue? { members[key] }

    func string(_ key: String) throws(APIError) -> String {
        guard case .string(let text)? = members[key] else { throw APIError.badRequest("\"\(key)\" must be a string") }
        return text
    }

    func optionalString(_ key: String) throws(APIError) -> String? {
        guard members[key] != nil else { return nil }
        return try string(key)
    }

    /// A string of 1…255 UTF-8 bytes without control characters (user, client and flow identifiers).
    func identifier(_ key: String) throws(APIError) -> String {
        let text = try string(key)
        guard (1...255).contains(text.utf8.count),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw APIError.badRequest("\"\(key)\" must be 1…255 bytes of text without control characters")
        }
        return text
    }
}
