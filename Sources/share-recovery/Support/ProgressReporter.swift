import Foundation
import ShareRecovery
import ShareCrypto

/// Shows recovery statuses on stderr: a live line with elapsed time on a terminal, plain lines
/// otherwise, JSON lines with `--json`.
final class ProgressReporter: Sendable {
    enum Style { case live, plain, json }

    private let style: Style
    private let start = Date()
    private let last = Locked<RecoveryStatus?>(nil)

    init(json: Bool) {
        style = json ? .json : (Terminal.stderrIsTerminal ? .live : .plain)
    }

    func report(_ status: RecoveryStatus) {
        last.withLock { $0 = status }
        let elapsed = Date().timeIntervalSince(start)
        let milliseconds = Int((elapsed * 1000).rounded())
        switch style {
        case .json:
            Terminal.error(#"{"status":"\#(status)","elapsedMs":\#(milliseconds)}"#)
        case .plain:
            Terminal.error("status: \(status)")
        case .live:
            let seconds = String(format: "%.2f", elapsed)
            Terminal.errorRaw("\r\u{1B}[2K\(status) (\(seconds) s)")
            if status == .done { Terminal.errorRaw("\n") }
        }
    }

    /// Ends a live line after a failure so the error starts on its own line.
    func finishAfterFailure() {
        if style == .live, last.withLock({ $0 }) != nil { Terminal.errorRaw("\n") }
    }
}
