import ShareCrypto
import ShareRecovery

/// Request and response bodies through `StrictJSON` and `JSONWriter`:
/// no Codable, so duplicate keys, trailing bytes, unknown or missing fields are all refused.
enum JSONBody {
    /// A compact UTF-8 body.
    static func encode(_ members: [(key: String, value: JSONValue)]) -> [UInt8] {
        Array(JSONWriter.write(.object(members)).utf8)
    }

    /// Reads a response body as a JSON object with exactly the given fields, by the engine's
    /// `StrictObject`: every failure is `malformedInput`, its reason led by the operation.
    /// - Parameters:
    ///   - reply: The response.
    ///   - required: Fields that must be present.
    ///   - optional: Fields that may be present.
    ///   - operation: For error reasons.
    /// - Throws: `malformedInput`.
    static func object(_ reply: HTTPReply, required: [String], optional: [String] = [], operation: String)
        throws(ShareRecoveryError) -> StrictObject
    {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(reply.body, maximumSize: max(reply.body.count, 1))
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(operation): the response is not JSON (\(error))")
        }
        return try StrictObject(
            value, required: required, optional: optional, failure: .malformedInput, context: "\(operation): ")
    }
}
