import Foundation
import ShareRecovery

#if canImport(Glibc)
import Glibc
#endif

/// scripts/events-receiver.py as a child process on 127.0.0.1: a receiver of the server's integrator
/// events that nobody here wrote, verifying each delivery with Python's `standardwebhooks` package and
/// logging it (`{"webhookId", "event", "body"}`, or `{"refused"}`) to a file read back by ``received(log:)``.
public final class StandardWebhooksReceiver {
    /// One request the receiver logged.
    public struct Received: Sendable {
        /// The `webhook-id`; empty when refused.
        public let id: String
        /// The bytes received, as text; empty when refused.
        public let body: String
        /// Whether the package verified the signature (the receiver answered 204, else 401).
        public let verified: Bool
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The repository's root, from this file's place in it (Tests/TestSupport/).
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// A Python with the `standardwebhooks` package: `$SHARE_RECOVERY_TEST_WEBHOOKS_PYTHON`, else
    /// `.build/events-venv/bin/python` (`make test` makes it: scripts/events-venv.sh); `nil` when neither.
    public static func python() -> String? {
        if let python = ProcessInfo.processInfo.environment["SHARE_RECOVERY_TEST_WEBHOOKS_PYTHON"], !python.isEmpty {
            return python
        }
        let venv = root.appendingPathComponent(".build/events-venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
    }

    /// Why a test that needs the receiver did not run.
    public static let skipped =
        "standardwebhooks receiver test SKIPPED: set SHARE_RECOVERY_TEST_WEBHOOKS_PYTHON or run `bash scripts/events-venv.sh` (make test does)"

    public let port: Int
    /// The receiver's log of deliveries, one JSON object a line.
    public let log: String
    private let process: Process

    /// Starts the receiver with `python` (one that has the package, ``python()``), accepting the
    /// secrets of `secretFile`, logging to `directory`/received.jsonl.
    public init(python: String, secretFile: String, directory: String) throws {
        let log = directory + "/received.jsonl"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            Self.root.appendingPathComponent("scripts/events-receiver.py").path, "--secret-file", secretFile, "--log",
            log, "--port", "0",
        ]
        let output = Pipe()
        process.standardOutput = output
        // Its tracebacks (a connection a fault proxy reset mid-answer) go to a file, not the test's output.
        let errors = directory + "/receiver.stderr"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errors) ?? FileHandle.nullDevice
        try process.run()
        let first = output.fileHandleForReading.availableData
        guard case .number(let announced)? = try? StrictJSON.parse(Array(first.prefix { $0 != 10 }))["port"],
            let port = Int(announced)
        else {
            Self.end(process)
            let reason = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw StartFailure(description: "events-receiver.py did not announce its port: \(reason)")
        }
        self.port = port
        self.log = log
        self.process = process
    }

    /// Stops the receiver. SIGKILL: the test process may block SIGTERM, and a child inherits the mask.
    public func stop() { Self.end(process) }

    private static func end(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }

    /// What the receiver logging to `log` has received so far, in arrival order.
    public static func received(log: String) -> [Received] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // After the last newline: nothing, or a line still being written.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        return lines.compactMap { line -> Received? in
            guard let entry = try? StrictJSON.parse(String(line)) else { return nil }
            guard case .string(let id)? = entry["webhookId"], case .string(let body)? = entry["body"] else {
                return Received(id: "", body: "", verified: false)
            }
            return Received(id: id, body: body, verified: true)
        }
    }
}
