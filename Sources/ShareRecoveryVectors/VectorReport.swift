// The report's JSON form is a public JSONValue of ShareRecovery.
public import ShareRecovery

/// What ``VectorSuite/verify(directory:)`` found: per file, how many cases ran and passed, and why
/// each failure failed.
public struct VectorReport: Sendable, CustomStringConvertible {
    /// One case that did not pass, or a problem with a whole file.
    public struct Failure: Sendable, Equatable, CustomStringConvertible {
        /// The case's `id`, `#n` for a case without a readable id, `nil` for a problem with the whole file.
        public let caseId: String?
        /// Why it failed.
        public let reason: String

        public var description: String { "\(caseId ?? "(file)"): \(reason)" }
    }

    /// One file's results.
    public struct File: Sendable {
        /// The file name (no directory).
        public let name: String
        /// The file's `format`, when it could be read.
        public let format: String?
        /// Cases found and run.
        public let casesRun: Int
        /// Cases that passed.
        public let passed: Int
        /// Failed cases and file-level problems.
        public let failures: [Failure]
    }

    /// Every `*.json` file, by name.
    public let files: [File]
    /// Problems with the directory itself (unreadable, no vector files).
    public let problems: [String]

    /// Whether at least one file was checked and nothing failed.
    public var isSuccess: Bool {
        problems.isEmpty && !files.isEmpty && files.allSatisfy { $0.failures.isEmpty }
    }

    /// Cases run across all files.
    public var casesRun: Int { files.reduce(0) { $0 + $1.casesRun } }

    /// Failures across all files.
    public var failures: [Failure] { files.flatMap(\.failures) }

    /// A human summary, one line per file and per failure.
    public var description: String {
        var lines = problems.map { "error: \($0)" }
        for file in files {
            lines.append("\(file.name) (\(file.format ?? "unknown format")): \(file.passed)/\(file.casesRun) passed")
            lines += file.failures.map { "  FAIL \($0)" }
        }
        lines.append(isSuccess ? "all \(casesRun) cases passed" : "\(failures.count + problems.count) failure(s)")
        return lines.joined(separator: "\n")
    }

    /// The report as JSON (machine output for the CLI).
    public var jsonValue: JSONValue {
        .object([
            ("success", .bool(isSuccess)),
            ("problems", .array(problems.map(JSONValue.string))),
            (
                "files",
                .array(
                    files.map { file in
                        .object([
                            ("name", .string(file.name)),
                            ("format", file.format.map(JSONValue.string) ?? .null),
                            ("cases", .integer(file.casesRun)),
                            ("passed", .integer(file.passed)),
                            (
                                "failures",
                                .array(
                                    file.failures.map { failure in
                                        .object([
                                            ("id", failure.caseId.map(JSONValue.string) ?? .null),
                                            ("reason", .string(failure.reason)),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }
}
