import Foundation
import ShareRecovery
import Synchronization

/// A live progress line for docs/formats.md §8 statuses: redrawn in place on a terminal, one line per
/// status otherwise (a log or a CI run).
public final class ProgressLine: Sendable {
    private let step = Mutex(0)
    private let started = Date()
    private let onTerminal = isatty(STDERR_FILENO) == 1

    public init() {}

    /// Shows one status; hand this to `RecoveryEngine.recover(…, progress:)`.
    public func show(_ status: RecoveryStatus) {
        let number = step.withLock { value -> Int in
            value += 1
            return value
        }
        let total = RecoveryStatus.sequence.count
        let elapsed = Int(Date().timeIntervalSince(started) * 1000)
        let line = "[\(number)/\(total)] \(status.rawValue) (\(elapsed) ms)"
        if onTerminal {
            // Clear the line and redraw; the final status ends it.
            let end = status == .done ? "\n" : ""
            FileHandle.standardError.write(Data("\r\u{1B}[K\(line)\(end)".utf8))
        } else {
            FileHandle.standardError.write(Data("\(line)\n".utf8))
        }
    }
}

/// Runs an example's body: engine errors print their stable code and reason and exit 1.
public func runExample(_ body: sending () async throws -> Void) async {
    do {
        try await body()
    } catch let error as ShareRecoveryError {
        FileHandle.standardError.write(Data("error: \(error.code): \(error.reason)\n".utf8))
        exit(1)
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
}
