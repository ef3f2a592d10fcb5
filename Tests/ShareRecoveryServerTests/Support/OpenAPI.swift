import Foundation
import ShareRecovery

/// docs/openapi.yaml, read with ``MiniYAML``, and a validator for real responses: the status must be
/// declared for the operation, and the JSON body must match the declared schema (types, required and
/// unknown properties, enums, constants, patterns of the simple kind the spec uses).
struct OpenAPISpec: Sendable {
    let root: JSONValue

    static let sourcePath: String = {
        // Tests/ShareRecoveryServerTests/Support/OpenAPI.swift → repository root.
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("docs/openapi.yaml").path
    }()

    static let shared: OpenAPISpec = {
        do {
            return OpenAPISpec(root: try MiniYAML.parse(try String(contentsOfFile: sourcePath, encoding: .utf8)))
        } catch {
            fatalError("docs/openapi.yaml: \(error)")
        }
    }()

    /// Every (method, path template) the spec declares.
    var operations: [(method: String, path: String)] {
        guard case .object(let paths)? = root["paths"] else { return [] }
        var out: [(String, String)] = []
        for (path, item) in paths {
            guard case .object(let members) = item else { continue }
            for (key, _) in members where ["get", "put", "post", "delete", "patch"].contains(key) {
                out.append((key.uppercased(), path))
            }
        }
        return out
    }

    /// The path template matching a concrete path.
    func template(for path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard case .object(let paths)? = root["paths"] else { return nil }
        for (template, _) in paths {
            let pattern = template.split(separator: "/", omittingEmptySubsequences: false)
            guard pattern.count == parts.count else { continue }
            if zip(pattern, parts).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) { return template }
        }
        return nil
    }

    /// Problems with a response, or `[]`.
    func check(method: String, path: String, status: Int, body: [UInt8]) -> [String] {
        let route = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        guard let template = template(for: route) else { return ["\(method) \(route): path not in the spec"] }
        guard let operation = root["paths"]?[template]?[method.lowercased()] else {
            return ["\(method) \(template): operation not in the spec"]
        }
        guard let declared = resolve(operation["responses"]?[String(status)]) else {
            return ["\(method) \(template): status \(status) not declared"]
        }
        guard let schema = resolve(declared["content"]?["application/json"]?["schema"]) else {
            if declared["content"]?["text/plain"] != nil {
                return String(validating: body, as: UTF8.self) == nil
                    ? ["\(method) \(template) \(status): text that is not UTF-8"] : []
            }
            return body.isEmpty ? [] : ["\(method) \(template) \(status): body where the spec declares none"]
        }
        guard let value = try? StrictJSON.parse(body) else {
            return ["\(method) \(template) \(status): body is not JSON"]
        }
        return validate(value, schema, at: "\(method) \(template) \(status) $")
    }

    /// Problems with an integrator event's body (the `integratorEvent` webhook's request body), or `[]`.
    func checkEvent(body: [UInt8]) -> [String] {
        let operation = root["webhooks"]?["integratorEvent"]?["post"]
        guard let schema = resolve(resolve(operation?["requestBody"])?["content"]?["application/json"]?["schema"])
        else {
            return ["webhooks.integratorEvent: no request body schema in the spec"]
        }
        guard let value = try? StrictJSON.parse(body) else { return ["integratorEvent: body is not JSON"] }
        return validate(value, schema, at: "webhooks.integratorEvent $")
    }

    func resolve(_ value: JSONValue?) -> JSONValue? {
        guard let value else { return nil }
        if case .string(let reference)? = value["$ref"] {
            var node: JSONValue? = root
            for component in reference.dropFirst(2).split(separator: "/") { node = node?[String(component)] }
            return resolve(node)
        }
        return value
    }

    func validate(_ value: JSONValue, _ schemaValue: JSONValue, at path: String) -> [String] {
        guard let schema = resolve(schemaValue) else { return ["\(path): unresolvable schema"] }
        var problems: [String] = []
        if let constant = schema["const"], constant != value { problems.append("\(path): expected \(constant)") }
        if case .array(let options)? = schema["enum"], !options.contains(value) {
            problems.append("\(path): \(value) not in enum")
        }
        if case .string(let type)? = schema["type"] {
            switch (type, value) {
            case ("string", .string(let text)):
                // JSON Schema counts code points, not grapheme clusters.
                let length = text.unicodeScalars.count
                if case .number(let minimum)? = schema["minLength"], length < Int(minimum)! {
                    problems.append("\(path): too short")
                }
                if case .number(let maximum)? = schema["maxLength"], length > Int(maximum)! {
                    problems.append("\(path): too long")
                }
                if case .string(let pattern)? = schema["pattern"], !SimplePattern.matches(pattern, text) {
                    problems.append("\(path): \"\(text.prefix(80))\" does not match \(pattern)")
                }
            case ("integer", .number(let text)) where Int64(text) != nil:
                if case .number(let minimum)? = schema["minimum"], Int64(text)! < Int64(minimum)! {
                    problems.append("\(path): \(text) below \(minimum)")
                }
                if case .number(let maximum)? = schema["maximum"], Int64(text)! > Int64(maximum)! {
                    problems.append("\(path): \(text) above \(maximum)")
                }
            case ("boolean", .bool): break
            case ("array", .array(let elements)):
                if case .number(let minimum)? = schema["minItems"], elements.count < Int(minimum)! {
                    problems.append("\(path): fewer than \(minimum) items")
                }
                if case .number(let maximum)? = schema["maxItems"], elements.count > Int(maximum)! {
                    problems.append("\(path): more than \(maximum) items")
                }
                if let items = schema["items"] {
                    for (offset, element) in elements.enumerated() {
                        problems += validate(element, items, at: "\(path)[\(offset)]")
                    }
                }
            case ("object", .object(let members)):
                if case .array(let required)? = schema["required"] {
                    for case .string(let key) in required where !members.contains(where: { $0.key == key }) {
                        problems.append("\(path): missing \(key)")
                    }
                }
                for (key, member) in members {
                    if let property = schema["properties"]?[key] {
                        problems += validate(member, property, at: "\(path).\(key)")
                    } else if let additional = schema["additionalProperties"] {
                        if additional == .bool(false) {
                            problems.append("\(path): undeclared property \(key)")
                        } else if case .object = additional {
                            problems += validate(member, additional, at: "\(path).\(key)")
                        }
                    }
                }
            default: problems.append("\(path): expected \(type), got \(value)")
            }
        }
        return problems
    }
}

/// The regular expressions the spec uses: `^`, then literals and character classes (`[a-z]`, negated
/// `[^…]`, `\uXXXX` escapes) each with `{n}`, `{n,m}`, `+` or `*`, then `$`; matched over Unicode scalars,
/// as JSON Schema's ECMA-262 patterns are.
enum SimplePattern {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        var atoms: [(set: (Unicode.Scalar) -> Bool, minimum: Int, maximum: Int)] = []
        var characters = Array(pattern.unicodeScalars)
        guard characters.first == "^", characters.last == "$" else { return false }
        characters = Array(characters.dropFirst().dropLast())
        var index = 0
        // One scalar, literal or `\uXXXX`, advancing `position`.
        func scalar(_ source: [Unicode.Scalar], _ position: inout Int) -> Unicode.Scalar? {
            guard source[position] == "\\" else {
                position += 1
                return source[position - 1]
            }
            guard position + 5 < source.count, source[position + 1] == "u",
                let value = UInt32(String(String.UnicodeScalarView(source[(position + 2)..<(position + 6)])), radix: 16)
            else { return nil }
            position += 6
            return Unicode.Scalar(value)
        }
        while index < characters.count {
            let set: (Unicode.Scalar) -> Bool
            if characters[index] == "[" {
                guard let close = characters[index...].firstIndex(of: "]") else { return false }
                var body = Array(characters[(index + 1)..<close])
                let negated = body.first == "^"
                if negated { body.removeFirst() }
                var ranges: [ClosedRange<Unicode.Scalar>] = []
                var position = 0
                while position < body.count {
                    guard let low = scalar(body, &position) else { return false }
                    if position + 1 < body.count, body[position] == "-" {
                        position += 1
                        guard let high = scalar(body, &position) else { return false }
                        ranges.append(low...high)
                    } else {
                        ranges.append(low...low)
                    }
                }
                set = { character in ranges.contains { $0.contains(character) } != negated }
                index = close + 1
            } else {
                guard let literal = scalar(characters, &index) else { return false }
                set = { $0 == literal }
            }
            var minimum = 1
            var maximum = 1
            if index < characters.count, characters[index] == "+" || characters[index] == "*" {
                minimum = characters[index] == "+" ? 1 : 0
                maximum = Int.max
                index += 1
            } else if index < characters.count, characters[index] == "{" {
                guard let close = characters[index...].firstIndex(of: "}") else { return false }
                let bounds = String(String.UnicodeScalarView(characters[(index + 1)..<close])).split(
                    separator: ",", omittingEmptySubsequences: false)
                guard let low = Int(bounds[0]), bounds.count <= 2, let high = Int(bounds.last!) else { return false }
                minimum = low
                maximum = high
                index = close + 1
            }
            atoms.append((set, minimum, maximum))
        }
        // Longest first, backing off: a class may hold the atom after it (`[^…]*[}]` in a JSON text).
        let input = Array(text.unicodeScalars)
        func match(_ atomIndex: Int, from start: Int) -> Bool {
            guard atomIndex < atoms.count else { return start == input.count }
            let atom = atoms[atomIndex]
            var end = start
            while end < input.count, end - start < atom.maximum, atom.set(input[end]) { end += 1 }
            while end - start >= atom.minimum {
                if match(atomIndex + 1, from: end) { return true }
                guard end > start else { return false }
                end -= 1
            }
            return false
        }
        return match(0, from: 0)
    }
}
