import ShareCrypto
import ShareRecovery

/// Request and response bodies through `StrictJSON` and `JSONWriter`:
/// no Codable, so duplicate keys, trailing bytes, unknown or missing fields are all refused.
enum JSONBody {
    /// A compact UTF-8 body.
    static func encode(_ members: [(key: String, value: JSONValue)]) -> [UInt8] {
        Array(JSONWriter.write(.object(members)).utf8)
    }

    /// Reads a response body as a JSON object with exactly the given fields.
    /// - Parameters:
    ///   - reply: The response.
    ///   - required: Fields that must be present.
    ///   - optional: Fields that may be present.
    ///   - operation: For error reasons.
    /// - Throws: `malformedInput`.
    static func object(_ reply: HTTPReply, required: [String], optional: [String] = [], operation: String)
        throws(ShareRecoveryError) -> Fields
    {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(reply.body, maximumSize: max(reply.body.count, 1))
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(operation): the response is not JSON (\(error))")
        }
        return try Fields(value, required: required, optional: optional, operation: operation)
    }

    /// The members of one JSON object, read by type; every failure is `malformedInput`.
    struct Fields {
        private let members: [String: JSONValue]
        private let operation: String

        init(_ value: JSONValue, required: [String], optional: [String], operation: String) throws(ShareRecoveryError) {
            self.operation = operation
            guard case .object(let list) = value else {
                throw ShareRecoveryError(.malformedInput, "\(operation): the response is not a JSON object")
            }
            var map: [String: JSONValue] = [:]
            for (key, member) in list { map[key] = member }
            let allowed = Set(required + optional)
            if let unknown = map.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw ShareRecoveryError(.malformedInput, "\(operation): unknown field \"\(unknown)\" in the response")
            }
            if let missing = required.first(where: { map[$0] == nil }) {
                throw ShareRecoveryError(.malformedInput, "\(operation): missing field \"\(missing)\" in the response")
            }
            members = map
        }

        /// Whether an optional field is present.
        func has(_ key: String) -> Bool { members[key] != nil }

        /// A field's raw value.
        func value(_ key: String) throws(ShareRecoveryError) -> JSONValue {
            guard let value = members[key] else {
                throw ShareRecoveryError(.malformedInput, "\(operation): missing field \"\(key)\" in the response")
            }
            return value
        }

        /// A string field.
        func string(_ key: String) throws(ShareRecoveryError) -> String {
            guard case .string(let text)? = members[key] else {
                throw ShareRecoveryError(.malformedInput, "\(operation): \"\(key)\" must be a string")
            }
            return text
        }

        /// An array field.
        func array(_ key: String) throws(ShareRecoveryError) -> [JSONValue] {
            guard case .array(let elements)? = members[key] else {
                throw ShareRecoveryError(.malformedInput, "\(operation): \"\(key)\" must be an array")
            }
            return elements
        }

        /// An array of strings.
        func stringArray(_ key: String) throws(ShareRecoveryError) -> [String] {
            try array(key).map { (element) throws(ShareRecoveryError) -> String in
                guard case .string(let text) = element else {
                    throw ShareRecoveryError(.malformedInput, "\(operation): \"\(key)\" must hold strings")
                }
                return text
            }
        }

        /// Lowercase hex of exactly `count` bytes.
        func hex(_ key: String, count: Int) throws(ShareRecoveryError) -> [UInt8] {
            guard let bytes = Hex.decode(try string(key)), bytes.count == count else {
                throw ShareRecoveryError(.malformedInput, "\(operation): \"\(key)\" must be \(count * 2) lowercase hex digits")
            }
            return bytes
        }
    }
}
