import ShareRecovery

/// A YAML reader for the subset docs/openapi.yaml is written in: block mappings and sequences by
/// indentation, plain / single- / double-quoted scalars, flow sequences of scalars (`[a, b]`), `{}` and
/// `[]`, folded (`>`, `>-`) and literal (`|`, `|-`) block scalars, whole-line comments. Anything else
/// fails loudly, so the spec cannot silently drift outside what the tests understand.
enum MiniYAML {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private struct Line {
        let number: Int
        let indent: Int
        let text: String
    }

    static func parse(_ text: String) throws -> JSONValue {
        var lines: [Line] = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard !line.contains("\t") else { throw Failure(description: "line \(offset + 1): tab") }
            lines.append(Line(number: offset + 1, indent: line.count - trimmed.count, text: String(trimmed)))
        }
        var parser = Parser(
            lines: lines, raw: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        let value = try parser.block(indent: 0)
        guard parser.index == lines.count else {
            throw Failure(description: "line \(lines[parser.index].number): unexpected")
        }
        return value
    }

    private struct Parser {
        let lines: [Line]
        let raw: [String]
        var index = 0

        mutating func block(indent: Int) throws -> JSONValue {
            guard index < lines.count else { return .null }
            let line = lines[index]
            if line.text == "-" || line.text.hasPrefix("- ") { return try sequence(indent: line.indent) }
            return try mapping(indent: line.indent)
        }

        mutating func mapping(indent: Int) throws -> JSONValue {
            var members: [(key: String, value: JSONValue)] = []
            while index < lines.count, lines[index].indent == indent, !(lines[index].text.hasPrefix("- ")) {
                let line = lines[index]
                let (key, rest) = try splitKey(line.text, line: line.number)
                guard !members.contains(where: { $0.key == key }) else {
                    throw Failure(description: "line \(line.number): duplicate key \(key)")
                }
                index += 1
                members.append((key, try value(after: rest, parentIndent: indent, line: line)))
            }
            if index < lines.count, lines[index].indent > indent {
                throw Failure(description: "line \(lines[index].number): bad indentation")
            }
            return .object(members)
        }

        mutating func sequence(indent: Int) throws -> JSONValue {
            var elements: [JSONValue] = []
            while index < lines.count, lines[index].indent == indent,
                lines[index].text == "-" || lines[index].text.hasPrefix("- ")
            {
                let line = lines[index]
                let rest = String(line.text.dropFirst(2))
                if rest.isEmpty {
                    index += 1
                    elements.append(try block(indent: indent + 1))
                } else if isMappingEntry(rest) {
                    // "- key: value" starts a mapping whose further keys sit at indent + 2.
                    let inner = indent + 2
                    var members: [(key: String, value: JSONValue)] = []
                    let (key, value) = try splitKey(rest, line: line.number)
                    index += 1
                    members.append((key, try self.value(after: value, parentIndent: inner, line: line)))
                    if index < lines.count, lines[index].indent == inner,
                        case .object(let more) = try mapping(indent: inner)
                    {
                        members += more
                    }
                    elements.append(.object(members))
                } else {
                    index += 1
                    elements.append(try scalar(rest, line: line.number))
                }
            }
            return .array(elements)
        }

        mutating func value(after rest: String, parentIndent: Int, line: Line) throws -> JSONValue {
            if rest.isEmpty {
                guard index < lines.count,
                    lines[index].indent > parentIndent
                        || (lines[index].indent == parentIndent && lines[index].text.hasPrefix("- "))
                else { return .null }
                return try block(indent: lines[index].indent)
            }
            if [">", ">-", "|", "|-"].contains(rest) {
                return .string(blockScalar(style: rest, parentIndent: parentIndent))
            }
            return try scalar(rest, line: line.number)
        }

        mutating func blockScalar(style: String, parentIndent: Int) -> String {
            var parts: [String] = []
            while index < lines.count, lines[index].indent > parentIndent {
                parts.append(lines[index].text)
                index += 1
            }
            let text = style.hasPrefix(">") ? parts.joined(separator: " ") : parts.joined(separator: "\n")
            return style.hasSuffix("-") ? text : text + "\n"
        }

        func isMappingEntry(_ text: String) -> Bool {
            (try? splitKey(text, line: 0)) != nil && !text.hasPrefix("'") && !text.hasPrefix("\"")
                && !text.hasPrefix("[")
                || text.hasPrefix("'") && text.contains("':")
        }

        func splitKey(_ text: String, line: Int) throws -> (String, String) {
            if text.hasPrefix("'") || text.hasPrefix("\"") {
                let quote = text.first!
                guard let close = text.dropFirst().firstIndex(of: quote) else {
                    throw Failure(description: "line \(line): unterminated key")
                }
                let key = String(text[text.index(after: text.startIndex)..<close])
                let after = text[text.index(after: close)...]
                guard after.hasPrefix(":") else { throw Failure(description: "line \(line): expected ':'") }
                return (key, String(after.dropFirst().drop { $0 == " " }))
            }
            guard
                let colon = text.firstRange(of: ": ")?.lowerBound
                    ?? (text.hasSuffix(":") ? text.index(before: text.endIndex) : nil)
            else {
                throw Failure(description: "line \(line): expected key: value")
            }
            let key = String(text[..<colon])
            guard !key.isEmpty, !key.contains(" ") || key.allSatisfy({ $0 != ":" }) else {
                throw Failure(description: "line \(line): bad key")
            }
            return (key, String(text[colon...].dropFirst().drop { $0 == " " }))
        }

        func scalar(_ text: String, line: Int) throws -> JSONValue {
            if text.hasPrefix("'") {
                guard text.hasSuffix("'"), text.count >= 2 else {
                    throw Failure(description: "line \(line): unterminated string")
                }
                return .string(
                    String(text.dropFirst().dropLast()).split(separator: "''", omittingEmptySubsequences: false).joined(
                        separator: "'"))
            }
            if text.hasPrefix("\"") {
                guard text.hasSuffix("\""), text.count >= 2 else {
                    throw Failure(description: "line \(line): unterminated string")
                }
                return .string(String(text.dropFirst().dropLast()))
            }
            if text == "{}" { return .object([]) }
            if text.hasPrefix("[") {
                guard text.hasSuffix("]") else {
                    throw Failure(description: "line \(line): unterminated flow sequence")
                }
                let inner = text.dropFirst().dropLast()
                if inner.trimmingSpaces.isEmpty { return .array([]) }
                return .array(try inner.split(separator: ",").map { try scalar(String($0).trimmingSpaces, line: line) })
            }
            if text.hasPrefix("{") || text.hasPrefix("&") || text.hasPrefix("*") || text.hasPrefix("!") {
                throw Failure(description: "line \(line): unsupported YAML")
            }
            switch text {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null", "~": return .null
            default: break
            }
            if let first = text.first, first == "-" || first.isNumber, Int(text) != nil { return .number(text) }
            return .string(text)
        }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
