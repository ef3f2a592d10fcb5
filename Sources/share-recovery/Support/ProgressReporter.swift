import Foundation
import ShareRecovery
import ShareCrypto

/// Shows a recovery's progress on stderr as ``RecoveryEvent``s: a live line on a terminal
/// (`[4/8] recoveringSigningShare 0.42 s`, with the attempt while a call is retried), plain lines
/// otherwise (`status: readingShare [1/8]`), JSON lines with `--json` (every field of the event).
/// On failure it says at which step, whether trying again may help, and the request id to give to
/// support; the error itself follows from the command.
///
/// An engine recovery hands it events (``event(_:)``); an offline recovery, which knows only its §8
/// statuses, reports those (``report(_:)``, ``failed(_:)``) and gets the same events.
final class ProgressReporter: Sendable {
    enum Style { case live, plain, json }

    private let printer: Printer
    private let tracker: RecoveryEventTracker

    init(json: Bool) {
        let printer = Printer(style: json ? .json : (Terminal.stderrIsTerminal ? .live : .plain))
        self.printer = printer
        tracker = RecoveryEventTracker(emit: printer.print)
    }

    /// An engine recovery's event.
    func event(_ event: RecoveryEvent) { printer.print(event) }

    /// An offline recovery's status.
    func report(_ status: RecoveryStatus) { tracker.status(status) }

    /// An offline recovery failed.
    func failed(_ error: any Error) { tracker.failed(error) }

    private final class Printer: Sendable {
        let style: Style
        /// Whether a live line is open (and needs a newline before anything else is printed).
        private let lineOpen = Locked(false)

        init(style: Style) { self.style = style }

        func print(_ event: RecoveryEvent) {
            let step = "\(event.step)/\(event.totalSteps)"
            switch (style, event.kind) {
            case (.json, _):
                Terminal.error(JSONWriter.write(Self.json(event)))
            case (.plain, .status(let status)):
                Terminal.error("status: \(status) [\(step)]")
            case (.plain, .retrying(let reason)):
                Terminal.error("retrying [\(step)], attempt \(event.attempt): \(reason)")
            case (.live, .status(let status)):
                let seconds = String(format: "%.2f", Self.seconds(event.elapsed))
                Terminal.errorRaw("\r\u{1B}[2K[\(step)] \(status) (\(seconds) s)")
                let done = status == .done
                if done { Terminal.errorRaw("\n") }
                lineOpen.withLock { $0 = !done }
            case (.live, .retrying(let reason)):
                Terminal.errorRaw("\r\u{1B}[2K[\(step)] retrying, attempt \(event.attempt): \(reason)")
                lineOpen.withLock { $0 = true }
            case (.live, .failed(let failure)), (.plain, .failed(let failure)):
                if lineOpen.withLock({ open in
                    defer { open = false }; return open
                }) {
                    Terminal.errorRaw("\n")
                }
                Terminal.error(
                    "failed at step \(step) (\(failure.isRetryable ? "worth retrying" : "not worth retrying as is")); "
                        + "request id \(event.requestId)")
            }
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        /// Every field, one JSON object: `{"event": "status", "status": …, "step", "totalSteps",
        /// "elapsedMs", "attempt", "requestId"}`, with `reason` for a retry and `code`, `retryable`,
        /// `hint` for a failure.
        static func json(_ event: RecoveryEvent) -> JSONValue {
            var members: [(String, JSONValue)]
            switch event.kind {
            case .status(let status): members = [("event", .string("status")), ("status", .string(status.rawValue))]
            case .retrying(let reason): members = [("event", .string("retrying")), ("reason", .string(reason))]
            case .failed(let failure):
                members = [
                    ("event", .string("failed")), ("code", .string(failure.code)),
                    ("retryable", .bool(failure.isRetryable)),
                    ("hint", .string(failure.hint)),
                ]
            }
            members += [
                ("step", .number("\(event.step)")), ("totalSteps", .number("\(event.totalSteps)")),
                ("elapsedMs", .number("\(Int((seconds(event.elapsed) * 1000).rounded()))")),
                ("attempt", .number("\(event.attempt)")),
                ("requestId", .string(event.requestId)),
            ]
            return .object(members)
        }
    }
}
