#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ShareCrypto

/// The reference server as an operator runs it: `share-recovery serve` in a child process, so the load
/// this process makes is measured against a server that shares no heap, executor or allocator with it
/// (on 2 cores they still share the CPU: the CPU each side spends is measured, `CPUTime`).
///
/// The binary is the `share-recovery` next to this executable (`recovery-bench` depends on it, so
/// `swift run recovery-bench` builds both into the same directory).
struct ServerProcess {
    let process: Process
    let baseURL: String
    /// Where its output goes: `serve.out` (the line with the port), `serve.err` (its log).
    let directory: String

    var pid: Int32 { process.processIdentifier }

    /// The files `serve` reads, in `directory`: a master key, the webhook secret, the OTP file.
    struct Files {
        let directory: String
        var masterKey: String { directory + "/master.key" }
        var webhookSecret: String { directory + "/webhook.secret" }
        var otp: String { directory + "/otp.jsonl" }
    }

    static func binary() throws -> String {
        let own = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let path = own.deletingLastPathComponent().appendingPathComponent("share-recovery").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError(
                "the server binary is not at \(path): build it beside the bench (swift build -c release, or swift run recovery-bench, which builds both)"
            )
        }
        return path
    }

    /// Starts `serve` on a free loopback port and waits until it prints that port.
    /// - Parameters:
    ///   - database: an SQLite path or a `postgres://` URL, as `serve --database` takes it.
    ///   - webhookSecret: written to the secret file `serve` reads.
    static func start(database: String, files: Files, masterKey: SecureBytes, webhookSecret: SecureBytes) throws
        -> ServerProcess
    {
        try writePrivate(Hex.encode(masterKey.revealedBytes()), to: files.masterKey)
        try writePrivate(String(decoding: webhookSecret.revealedBytes(), as: UTF8.self), to: files.webhookSecret)
        let output = files.directory + "/serve.out", log = files.directory + "/serve.err"
        for path in [output, log] where !FileManager.default.createFile(atPath: path, contents: nil) {
            throw BenchError("cannot create \(path)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary())
        process.arguments =
            [
                "serve", "--port", "0", "--database", database, "--master-key-file", files.masterKey,
                "--webhook-secret-file", files.webhookSecret, "--otp-file", files.otp,
                // Every request of the load comes from 127.0.0.1: the per-address limits are scaled as for a
                // front proxy; the per-identifier ones (each bench user makes at most two flows) stay.
                "--otp-address-limit-scale", "1000",
                // Under a sanitizer (the test suite's quick run) the server's call to its own webhook can wait
                // behind the whole load; a webhook timeout is not what the bench measures.
                "--webhook-timeout", "300",
            ] + (database.hasPrefix("postgres") ? ["--migrate"] : [])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        // `serve` prints {"listening":"http://127.0.0.1:N","port":N} once it accepts connections; a
        // sanitized build takes a while to get there.
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let text = FileText.read(output) ?? ""
            if let range = text.range(of: #""port":"#) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits) {
                    return ServerProcess(
                        process: process, baseURL: "http://127.0.0.1:\(port)", directory: files.directory)
                }
            }
            guard process.isRunning else {
                let reason = FileText.read(log) ?? ""
                throw BenchError(
                    "share-recovery serve exited with \(process.terminationStatus) before listening: \(reason)")
            }
            usleep(50_000)
        }
        process.terminate()
        throw BenchError("share-recovery serve printed no port within 120 s (its log: \(log))")
    }

    /// SIGTERM, as an orchestrator stops it: the server drains and must exit 0.
    func stop() throws {
        guard process.isRunning else {
            throw BenchError("share-recovery serve had exited (\(process.terminationStatus)) before the load ended")
        }
        process.terminate()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let reason = FileText.read(directory + "/serve.err") ?? ""
            throw BenchError("share-recovery serve did not exit 0 on SIGTERM (\(process.terminationStatus)): \(reason)")
        }
    }

    private static func writePrivate(_ text: String, to path: String) throws {
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        else { throw BenchError("cannot write \(path)") }
    }
}

/// CPU seconds a process has used (user + system), from `/proc/<pid>/stat`: what the load and the
/// server each cost, beside the wall time.
enum CPUTime {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func seconds(of pid: Int32) -> Double {
        guard let text = FileText.read("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")")
        else { return 0 }
        // After the command name: state, ppid, … with utime and stime the 12th and 13th fields.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticksPerSecond
    }
}

/// A file's text, read with `read(2)` until its end. Foundation's `String(contentsOfFile:)` leaks its
/// buffer when the file is empty (AddressSanitizer's leak check caught it on `serve.out` before the
/// server wrote to it), and the server's output is polled while it is.
enum FileText {
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes += chunk[0..<count]
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
