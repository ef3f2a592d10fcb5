import ShareRecovery
import ShareRecoveryServer

#if canImport(Glibc)
import Glibc
#endif

/// Where the CLI writes: machine output (JSON) on stdout, human progress and errors on stderr.
enum Terminal {
    static func output(_ text: String) {
        print(text)
        // Line by line even into a pipe: a supervisor waits for `serve`'s listening line, and a
        // killed process must not lose what it already reported. (`nil`: every stream; `stdout` is a
        // mutable global that strict concurrency refuses.)
        fflush(nil)
    }

    static func error(_ text: String) {
        var line = text
        if !line.hasSuffix("\n") { line += "\n" }
        errorRaw(line)
    }

    /// Writes without a newline (the live progress line).
    static func errorRaw(_ text: String) {
        // Unbuffered write(2): stderr lines must not interleave with buffered stdout.
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            bytes = bytes.dropFirst(written)
        }
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// A CLI failure that is not a format error: unreadable files, bad combinations of options.
struct CLIError: Error {
    let code: String
    let message: String
    let isUsage: Bool

    static func usage(_ message: String) -> CLIError { CLIError(code: "usage", message: message, isUsage: true) }
    static func file(_ message: String) -> CLIError { CLIError(code: "fileError", message: message, isUsage: false) }

    /// An output path that exists: a usage error, since the command never overwrites what it writes.
    static func outputExists(_ message: String) -> CLIError {
        CLIError(code: "outputExists", message: message, isUsage: true)
    }

    /// An engine check that failed on option values alone (a threshold, KDF parameters): a usage
    /// error that keeps the engine's code, so its hint still applies.
    static func usage(_ error: ShareRecoveryError) -> CLIError {
        CLIError(code: "\(error.code)", message: error.reason, isUsage: true)
    }

    /// A server option whose value alone is wrong (a `--trusted-proxy` network): a usage error with
    /// the server's code, so its hint applies.
    static func usage(_ error: ServerStartError) -> CLIError {
        CLIError(code: error.code.rawValue, message: error.reason, isUsage: true)
    }
}
