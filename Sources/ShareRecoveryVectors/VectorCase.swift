import ShareCrypto
import ShareRecovery

/// Something wrong with a vector case itself, or an expected output that differs from what this
/// implementation computes. Distinct from ``ShareRecoveryError``, which is the implementation's verdict.
struct VectorProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One file kind of docs/formats.md §9: how its cases are generated and how each is checked.
protocol VectorKind {
    /// The `<kind>` in `share-recovery/vectors/<kind>@1` and `<kind>.json`.
    static var kind: String { get }
    /// The file's `description`.
    static var summary: String { get }
    /// Case fields besides `id`, `result` and `error` (§9's table).
    static var fields: Set<String> { get }
    /// Builds every case from a deterministic stream.
    static func cases(random: DeterministicRandom) throws -> [JSONValue]
    /// Recomputes a valid case; throws ``VectorProblem`` on a mismatch.
    static func checkValid(_ vector: VectorCase) throws
    /// Runs an invalid case; the implementation's ``ShareRecoveryError`` is expected to escape.
    static func exerciseInvalid(_ vector: VectorCase) throws
}

extension VectorKind {
    static var format: String { "share-recovery/vectors/\(kind)@1" }
    static var fileName: String { "\(kind).json" }
}

/// The members of one case, read strictly: unknown fields are refused, and every accessor names
/// the field it could not read.
struct VectorCase {
    let id: String
    let expectsValid: Bool
    /// The expected §9 error name of an invalid case.
    let expectedError: String?
    private let members: [String: JSONValue]

    init(_ value: JSONValue, fields: Set<String>) throws(VectorProblem) {
        guard case .object(let list) = value else { throw VectorProblem("a case must be a JSON object") }
        var map: [String: JSONValue] = [:]
        for (key, member) in list { map[key] = member }
        guard case .string(let id)? = map["id"], !id.isEmpty else { throw VectorProblem("missing or empty \"id\"") }
        self.id = id
        guard case .string(let result)? = map["result"], result == "valid" || result == "invalid" else {
            throw VectorProblem("\"result\" must be \"valid\" or \"invalid\"")
        }
        expectsValid = result == "valid"
        switch map["error"] {
        case nil:
            guard expectsValid else { throw VectorProblem("an invalid case must name its \"error\"") }
            expectedError = nil
        case .string(let name)?:
            guard !expectsValid else { throw VectorProblem("a valid case has no \"error\"") }
            guard VectorRunner.normativeErrors.contains(name) else {
                throw VectorProblem("\"\(name)\" is not one of docs/formats.md §9's error names")
            }
            expectedError = name
        default:
            throw VectorProblem("\"error\" must be a string")
        }
        let allowed = fields.union(["id", "result", "error"])
        if let unknown = map.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw VectorProblem("unknown field \"\(unknown)\"")
        }
        members = map
    }

    func has(_ key: String) -> Bool { members[key] != nil }

    func value(_ key: String) throws(VectorProblem) -> JSONValue {
        guard let value = members[key] else { throw VectorProblem("missing field \"\(key)\"") }
        return value
    }

    func string(_ key: String) throws(VectorProblem) -> String {
        guard case .string(let text) = try value(key) else { throw VectorProblem("\"\(key)\" must be a string") }
        return text
    }

    /// Lowercase hex of any length.
    func hex(_ key: String) throws(VectorProblem) -> [UInt8] {
        try Self.hex(try string(key), field: key)
    }

    func integer(_ key: String) throws(VectorProblem) -> Int {
        try Self.integer(try value(key), field: key)
    }

    func array(_ key: String) throws(VectorProblem) -> [JSONValue] {
        guard case .array(let elements) = try value(key) else { throw VectorProblem("\"\(key)\" must be an array") }
        return elements
    }

    func stringArray(_ key: String) throws(VectorProblem) -> [String] {
        try array(key).map { (element) throws(VectorProblem) -> String in
            guard case .string(let text) = element else { throw VectorProblem("\"\(key)\" must hold strings") }
            return text
        }
    }

    /// An object keyed by party index in canonical decimal (`"1"`, `"2"`, …).
    func indexed(_ key: String) throws(VectorProblem) -> [Int: JSONValue] {
        try Self.indexed(try value(key), field: key)
    }

    static func hex(_ text: String, field: String) throws(VectorProblem) -> [UInt8] {
        guard let bytes = Hex.decode(text) else { throw VectorProblem("\"\(field)\" must be lowercase hex") }
        return bytes
    }

    static func integer(_ value: JSONValue, field: String) throws(VectorProblem) -> Int {
        guard case .number(let text) = value, let number = Int(text), String(number) == text, number >= 0 else {
            throw VectorProblem("\"\(field)\" must be a non-negative JSON integer")
        }
        return number
    }

    static func indexed(_ value: JSONValue, field: String) throws(VectorProblem) -> [Int: JSONValue] {
        guard case .object(let list) = value else { throw VectorProblem("\"\(field)\" must be an object") }
        var out: [Int: JSONValue] = [:]
        for (key, member) in list {
            guard let index = Int(key), String(index) == key, index > 0 else {
                throw VectorProblem("\"\(field)\" keys must be party indices in decimal, got \"\(key)\"")
            }
            out[index] = member
        }
        return out
    }
}

/// Builds cases with their members in a fixed order: `id`, `result`, `error`, then the fields.
enum CaseBuilder {
    static func valid(_ id: String, _ fields: [(key: String, value: JSONValue)]) -> JSONValue {
        .object([("id", .string(id)), ("result", .string("valid"))] + fields)
    }

    static func invalid(_ id: String, _ error: ShareRecoveryError.Code, _ fields: [(key: String, value: JSONValue)])
        -> JSONValue
    {
        .object([("id", .string(id)), ("result", .string("invalid")), ("error", .string(error.description))] + fields)
    }
}

/// Checks files and cases.
enum VectorRunner {
    /// docs/formats.md §9's normative error names: the only ones a vector may expect.
    static let normativeErrors: Set<String> = [
        "malformedRecord", "malformedCipherText", "malformedCustodianShare", "unsupportedVersion", "unsupportedMethod",
        "kdfMismatch", "invalidKdfParameters", "invalidKeyMaterial", "emptySecret", "invalidParameters",
        "invalidScalar",
        "invalidPoint", "invalidShare", "publicKeyMismatch", "authenticationFailed", "tamperedShare", "unsealFailed",
        "dealerCheckFailed", "subShareCheckFailed", "noMatchingShare", "inconsistentShares", "dkgProofFailed",
        "invalidSignatureShare", "nonceReused", "ecdsaCheckFailed", "pairSetupStale",
    ]

    static var kinds: [any VectorKind.Type] {
        [
            ShareRecordVectors.self, CipherTextVectors.self, CustodianShareVectors.self, SelectionVectors.self,
            ResharingVectors.self, DKGVectors.self, SigningVectors.self, ECDSAVectors.self,
        ]
    }

    /// Vector files are larger than any single document the engine reads.
    static let maximumFileSize = 64 << 20

    /// Runs one case: `nil` when it passes, else why not.
    static func run(_ kind: any VectorKind.Type, _ vector: VectorCase) -> String? {
        if vector.expectsValid {
            do {
                try kind.checkValid(vector)
                return nil
            } catch let error as ShareRecoveryError {
                return "valid case refused: \(error)"
            } catch {
                return "\(error)"
            }
        }
        let expected = vector.expectedError ?? "?"
        do {
            try kind.exerciseInvalid(vector)
            return "accepted, expected \(expected)"
        } catch let error as ShareRecoveryError {
            let actual = error.code.description
            return actual == expected ? nil : "expected \(expected), got \(actual): \(error.reason)"
        } catch {
            return "\(error)"
        }
    }

    /// Checks one file's text.
    static func verifyFile(name: String, text: some Collection<UInt8>) -> VectorReport.File {
        func fileFailure(_ reason: String, format: String? = nil) -> VectorReport.File {
            VectorReport.File(
                name: name, format: format, casesRun: 0, passed: 0,
                failures: [VectorReport.Failure(caseId: nil, reason: reason)])
        }
        let document: JSONValue
        do {
            document = try StrictJSON.parse(text, maximumSize: maximumFileSize)
        } catch {
            return fileFailure("not strict JSON: \(error)")
        }
        guard case .object(let list) = document else { return fileFailure("the file must be a JSON object") }
        var top: [String: JSONValue] = [:]
        for (key, member) in list { top[key] = member }
        guard case .string(let format)? = top["format"] else { return fileFailure("missing \"format\"") }
        guard let kind = kinds.first(where: { $0.format == format }) else {
            return fileFailure("unknown format \"\(format)\"", format: format)
        }
        guard Set(top.keys) == ["format", "description", "cases"] else {
            return fileFailure("the file must have exactly \"format\", \"description\" and \"cases\"", format: format)
        }
        guard case .string = top["description"], case .array(let cases)? = top["cases"] else {
            return fileFailure("\"description\" must be a string and \"cases\" an array", format: format)
        }
        var failures: [VectorReport.Failure] = []
        var seen = Set<String>()
        var passed = 0
        for (position, value) in cases.enumerated() {
            let vector: VectorCase
            do {
                vector = try VectorCase(value, fields: kind.fields)
            } catch {
                let id: String? =
                    if case .string(let text)? = value["id"] {
                        text
                    } else {
                        nil
                    }
                failures.append(VectorReport.Failure(caseId: id ?? "#\(position)", reason: "malformed case: \(error)"))
                continue
            }
            guard seen.insert(vector.id).inserted else {
                failures.append(VectorReport.Failure(caseId: vector.id, reason: "duplicate id"))
                continue
            }
            if let reason = run(kind, vector) {
                failures.append(VectorReport.Failure(caseId: vector.id, reason: reason))
            } else {
                passed += 1
            }
        }
        return VectorReport.File(name: name, format: format, casesRun: cases.count, passed: passed, failures: failures)
    }
}

// MARK: - Generation helpers

extension JSONValue {
    static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }
    static func hex(_ bytes: some Sequence<UInt8>) -> JSONValue { .string(Hex.encode(bytes)) }

    /// An object with `key` set to `value`: replaced in place if present, appended otherwise.
    func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append((key, value))
        }
        return .object(members)
    }

    /// An object without `key`.
    func removing(_ key: String) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { $0.key != key })
    }

    /// The same value with every object's members sorted by key, for order-insensitive comparison.
    var sortedKeys: JSONValue {
        switch self {
        case .object(let members):
            .object(members.map { ($0.key, $0.value.sortedKeys) }.sorted { $0.0 < $1.0 })
        case .array(let elements): .array(elements.map(\.sortedKeys))
        default: self
        }
    }
}

/// Shared fixtures for generation.
enum VectorFixtures {
    /// The fixed `createdAt` of every custodian share in the vectors.
    static let createdAt = "2026-01-01T00:00:00Z"

    /// A share set from a random polynomial (a trusted dealer, as ``KeyGeneration`` but of any kind and generation).
    static func dealSet(
        curve: Curve, walletId: String, kind: SetKind, threshold: Int, parties: Int, generation: UInt32,
        random: DeterministicRandom
    ) throws -> [ShareRecord] {
        let polynomial = Polynomial.random(
            constant: Scalar.random(on: curve, using: random), degree: threshold - 1, using: random)
        let commitments = try polynomial.commitments()
        let setId = SetID.random(using: random)
        return try (1...parties).map { index in
            try ShareRecord(
                walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties, partyIndex: index,
                generation: generation, setId: setId, secret: polynomial.evaluate(atIndex: index),
                commitments: commitments)
        }
    }

    /// The record's binary form as plain bytes (vectors publish secrets on purpose).
    static func binary(_ record: ShareRecord) throws -> [UInt8] {
        try record.binary().revealedBytes()
    }

    /// §4 JSON with the secret, as a value.
    static func json(_ record: ShareRecord) -> JSONValue {
        record.jsonValue(includingSecret: true)
    }

    /// The secret scalar's encoding.
    static func secretBytes(_ record: ShareRecord) -> [UInt8] {
        record.secret?.rawRepresentation.revealedBytes() ?? []
    }

    /// `secret + 1`: a valid scalar that no longer matches the commitments.
    static func shiftedSecret(_ record: ShareRecord) -> [UInt8] {
        guard let secret = record.secret else { return [] }
        return (secret + Scalar(1, curve: record.curve)).rawRepresentation.revealedBytes()
    }

    /// The group order in the curve's scalar encoding.
    static func order(_ curve: Curve) -> [UInt8] {
        switch curve {
        case .secp256k1: Hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")!
        case .ed25519: Hex.decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")!
        }
    }

    /// Byte offset of the secret scalar in a record's binary form.
    static func secretOffset(_ record: ShareRecord) -> Int { ShareRecord.fixedHeaderCount + record.walletId.utf8.count }

    /// Byte offset of commitment `m` in a record's binary form.
    static func commitmentOffset(_ record: ShareRecord, _ m: Int) -> Int {
        secretOffset(record) + Curve.scalarCount + m * record.curve.pointCount
    }

    /// Bytes with one change applied.
    static func mutated(_ bytes: [UInt8], _ change: (inout [UInt8]) -> Void) -> [UInt8] {
        var copy = bytes
        change(&copy)
        return copy
    }

    /// Parses a JSON text we wrote ourselves.
    static func parse(_ text: String) throws -> JSONValue {
        try StrictJSON.parse(text)
    }
}
