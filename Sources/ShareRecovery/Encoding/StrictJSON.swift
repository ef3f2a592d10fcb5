import ShareCrypto

/// A JSON value as the strict reader sees it. Numbers keep their text, so a reader can insist on
/// integers written as integers (docs/formats.md §4: "numbers that are not JSON integers" are rejected).
public indirect enum JSONValue: Sendable, Equatable {
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// An object's member by key; `nil` when there is none or this is not an object. A lookup only:
    /// readers that must refuse a wrong shape (unknown or missing fields) check the object first.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case let (.object(a), .object(b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case let (.array(a), .array(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case (.null, .null): true
        default: false
        }
    }
}

/// An RFC 8259 reader that refuses what a lenient one would guess at: duplicate keys, bytes after
/// the value, invalid UTF-8, lone surrogates, depth beyond a limit, and input beyond a size limit.
public enum StrictJSON {
    /// Largest accepted input, in bytes.
    public static let defaultMaximumSize = 1 << 20
    /// Deepest accepted nesting.
    public static let maximumDepth = 32

    /// Why a text is not acceptable JSON.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, and at which byte.
        public let description: String
    }

    /// Parses one JSON value.
    /// - Parameters:
    ///   - text: The UTF-8 text.
    ///   - maximumSize: The size limit in bytes.
    /// - Throws: ``ParseError``.
    public static func parse(_ text: some Collection<UInt8>, maximumSize: Int = defaultMaximumSize) throws(ParseError)
        -> JSONValue
    {
        guard text.count <= maximumSize else {
            throw ParseError(description: "JSON of \(text.count) bytes exceeds \(maximumSize)")
        }
        var parser = Parser(bytes: Array(text))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("bytes after the JSON value") }
        return value
    }

    /// Parses JSON held in a `String`.
    public static func parse(_ text: String, maximumSize: Int = defaultMaximumSize) throws(ParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumSize: maximumSize)
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        func error(_ message: String) -> ParseError { ParseError(description: "\(message) at byte \(index)") }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func parseValue(depth: Int) throws(ParseError) -> JSONValue {
            guard depth <= StrictJSON.maximumDepth else { throw error("nesting too deep") }
            guard index < bytes.count else { throw error("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
            case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
            case UInt8(ascii: "n"): try expectLiteral("null"); return .null
            default: return .number(try parseNumber())
            }
        }

        mutating func expectLiteral(_ literal: String) throws(ParseError) {
            let expected = Array(literal.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw error("invalid literal")
            }
            index += expected.count
        }

        mutating func parseObject(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            var seen = Set<String>()
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
                let key = try parseString()
                guard seen.insert(key).inserted else { throw error("duplicate key \"\(key)\"") }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end in object") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                index += 1
                return .object(members)
            }
        }

        mutating func parseArray(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end in array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                index += 1
                return .array(elements)
            }
        }

        mutating func parseHex4() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("short \\u escape") }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("bad \\u escape")
                }
                value = value << 4 | digit
            }
            index += 4
            return value
        }

        mutating func parseString() throws(ParseError) -> String {
            index += 1
            var out = [UInt8]()
            while true {
                guard index < bytes.count else { throw error("unterminated string") }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    break
                }
                guard byte >= 0x20 else { throw error("control character in string") }
                if byte != UInt8(ascii: "\\") {
                    // The run up to the next quote, escape or control character, appended at once.
                    let start = index
                    index += 1
                    while index < bytes.count, bytes[index] >= 0x20, bytes[index] != UInt8(ascii: "\""),
                        bytes[index] != UInt8(ascii: "\\")
                    {
                        index += 1
                    }
                    out.append(contentsOf: bytes[start..<index])
                    continue
                }
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("lone surrogate") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("lone surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid code point") }
                    out += Array(String(Character(unicode)).utf8)
                default: throw error("invalid escape")
                }
            }
            guard let text = String(validating: out, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
            return text
        }

        mutating func parseNumber() throws(ParseError) -> String {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else {
                throw error("unexpected character")
            }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                let digits = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > digits else { throw error("bad fraction") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                let digits = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                guard index > digits else { throw error("bad exponent") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
    }
}

/// Writes JSON with keys in the order given, so our outputs are byte-for-byte stable: compact by
/// default, or indented for files people read (the published test vectors).
public enum JSONWriter {
    /// Serialises a value compactly: no whitespace, non-ASCII text as UTF-8.
    public static func write(_ value: JSONValue) -> String {
        var out = ""
        append(value, style: Style(indent: nil, asciiOnly: false), level: 0, to: &out)
        return out
    }

    /// Serialises a value over several lines: one member or element per line, `": "` after keys,
    /// empty objects and arrays as `{}` and `[]`, no trailing newline.
    /// - Parameters:
    ///   - value: The value.
    ///   - indent: Spaces per nesting level.
    ///   - asciiOnly: Escape every non-ASCII character as `\uXXXX` (a surrogate pair above U+FFFF), so
    ///     the text survives editors and tools that re-encode or normalise Unicode.
    public static func writeIndented(_ value: JSONValue, indent: Int = 2, asciiOnly: Bool = false) -> String {
        var out = ""
        append(value, style: Style(indent: max(indent, 0), asciiOnly: asciiOnly), level: 0, to: &out)
        return out
    }

    private struct Style {
        /// Spaces per level, or `nil` for compact output.
        let indent: Int?
        let asciiOnly: Bool
    }

    private static func newline(_ style: Style, level: Int, to out: inout String) {
        guard let indent = style.indent else { return }
        out += "\n" + String(repeating: " ", count: indent * level)
    }

    private static func append(_ value: JSONValue, style: Style, level: Int, to out: inout String) {
        switch value {
        case .object(let members):
            out += "{"
            for (offset, member) in members.enumerated() {
                if offset > 0 { out += "," }
                newline(style, level: level + 1, to: &out)
                appendString(member.key, asciiOnly: style.asciiOnly, to: &out)
                out += style.indent == nil ? ":" : ": "
                append(member.value, style: style, level: level + 1, to: &out)
            }
            if !members.isEmpty { newline(style, level: level, to: &out) }
            out += "}"
        case .array(let elements):
            out += "["
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out += "," }
                newline(style, level: level + 1, to: &out)
                append(element, style: style, level: level + 1, to: &out)
            }
            if !elements.isEmpty { newline(style, level: level, to: &out) }
            out += "]"
        case .string(let text): appendString(text, asciiOnly: style.asciiOnly, to: &out)
        case .number(let text): out += text
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func appendUnicodeEscape(_ unit: UInt16, to out: inout [UInt8]) {
        out += [UInt8(ascii: "\\"), UInt8(ascii: "u")]
        for shift in [12, 8, 4, 0] { out.append(hexDigits[Int(unit >> UInt16(shift) & 0xF)]) }
    }

    private static func appendString(_ text: String, asciiOnly: Bool, to out: inout String) {
        // Escaped into a byte buffer and appended to the String once: appending scalar by scalar was
        // most of the time a server spent answering with custodian shares (JSON inside JSON).
        // Most strings (hex, base64, identifiers) need no escape at all: one scan of their bytes, then
        // the string as it is.
        func plain(_ byte: UInt8) -> Bool {
            (0x20...0x7E).contains(byte) && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
        }
        // A native string's bytes are contiguous: scanned as a buffer, not through the view's iterator.
        if text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(plain) }) ?? text.utf8.allSatisfy(plain) {
            out += "\""
            out += text
            out += "\""
            return
        }
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(text.utf8.count + 2)
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            switch scalar {
            case "\"": bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case "\\": bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case "\n": bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case "\r": bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case "\t": bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case _ where scalar.value < 0x20: appendUnicodeEscape(UInt16(scalar.value), to: &bytes)
            case _ where scalar.value == 0x7F && asciiOnly: appendUnicodeEscape(0x7F, to: &bytes)
            case _ where scalar.value < 0x80: bytes.append(UInt8(scalar.value))
            case _ where asciiOnly: for unit in String(scalar).utf16 { appendUnicodeEscape(unit, to: &bytes) }
            default: bytes += String(scalar).utf8
            }
        }
        bytes.append(UInt8(ascii: "\""))
        out += String(decoding: bytes, as: UTF8.self)
    }
}

/// Reads the members of one JSON object exactly: every expected key present (optional ones may be
/// absent), nothing else, each of the right type. All failures carry one error code chosen by the
/// caller, and every reason starts with the caller's context (e.g. the operation whose answer it is).
/// The engine's formats and ShareRecoveryHTTP's reading of server answers both use it.
package struct StrictObject {
    private var members: [String: JSONValue]
    private let failure: ShareRecoveryError.Code
    private let context: String

    /// - Parameters:
    ///   - value: The JSON value, which must be an object.
    ///   - required: Keys that must be present.
    ///   - optional: Keys that may be present (never as `null`).
    ///   - failure: The code for any shape problem.
    ///   - context: Put before every reason (`"fetch cipherText: "`); empty for the formats.
    package init(
        _ value: JSONValue, required: [String], optional: [String] = [], failure: ShareRecoveryError.Code,
        context: String = ""
    ) throws(ShareRecoveryError) {
        self.failure = failure
        self.context = context
        // `self` is not whole yet: the reasons are built from the arguments.
        func problem(_ reason: String) -> ShareRecoveryError { ShareRecoveryError(failure, context + reason) }
        guard case .object(let list) = value else { throw problem("expected a JSON object") }
        var map: [String: JSONValue] = [:]
        for (key, member) in list { map[key] = member }
        let allowed = Set(required + optional)
        if let unknown = map.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw problem("unknown field \"\(unknown)\"")
        }
        if let missing = required.first(where: { map[$0] == nil }) {
            throw problem("missing field \"\(missing)\"")
        }
        members = map
    }

    private func problem(_ reason: String) -> ShareRecoveryError { ShareRecoveryError(failure, context + reason) }

    package func has(_ key: String) -> Bool { members[key] != nil }

    /// Any member, as it is.
    package func value(_ key: String) throws(ShareRecoveryError) -> JSONValue {
        guard let value = members[key] else { throw problem("missing field \"\(key)\"") }
        return value
    }

    package func string(_ key: String) throws(ShareRecoveryError) -> String {
        guard case .string(let text)? = members[key] else { throw problem("\"\(key)\" must be a string") }
        return text
    }

    package func optionalString(_ key: String) throws(ShareRecoveryError) -> String? {
        guard members[key] != nil else { return nil }
        return try string(key)
    }

    /// A non-negative JSON integer (digits only: no sign, fraction or exponent) up to `maximum`;
    /// larger values are a range problem and get `rangeFailure`.
    package func integer(_ key: String, maximum: UInt64, rangeFailure: ShareRecoveryError.Code)
        throws(ShareRecoveryError) -> UInt64
    {
        guard case .number(let text)? = members[key] else { throw problem("\"\(key)\" must be a number") }
        if text.hasPrefix("-"), text.dropFirst().allSatisfy(\.isASCIIDigit) {
            throw ShareRecoveryError(rangeFailure, "\"\(key)\" must not be negative")
        }
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else {
            throw problem("\"\(key)\" must be a JSON integer")
        }
        guard let value = UInt64(text), value <= maximum else {
            throw ShareRecoveryError(rangeFailure, "\"\(key)\" is out of range")
        }
        return value
    }

    package func array(_ key: String) throws(ShareRecoveryError) -> [JSONValue] {
        guard case .array(let elements)? = members[key] else { throw problem("\"\(key)\" must be an array") }
        return elements
    }

    package func stringArray(_ key: String) throws(ShareRecoveryError) -> [String] {
        var out: [String] = []
        for element in try array(key) {
            guard case .string(let text) = element else { throw problem("\"\(key)\" must hold strings") }
            out.append(text)
        }
        return out
    }

    /// Lowercase hex of exactly `count` bytes.
    package func hex(_ key: String, count: Int) throws(ShareRecoveryError) -> [UInt8] {
        try StrictObject.hex(try string(key), count: count, field: key, failure: failure, context: context)
    }

    static func hex(_ text: String, count: Int, field: String, failure: ShareRecoveryError.Code, context: String = "")
        throws(ShareRecoveryError) -> [UInt8]
    {
        guard let bytes = Hex.decode(text), bytes.count == count else {
            throw ShareRecoveryError(failure, context + "\"\(field)\" must be \(count * 2) lowercase hex digits")
        }
        return bytes
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) && isASCII }
}
