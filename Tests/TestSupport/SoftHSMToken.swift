import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A SoftHSM2 token in a temporary directory, with two AES-256 keys made by pkcs11-tool (OpenSC), for
/// the master key held by a PKCS#11 token (docs/server.md, "Master key on a PKCS#11 token").
/// `SOFTHSM2_CONF` is set for this process and the children it starts: tests using it run serially.
public struct SoftHSMToken {
    public static let module = "/usr/lib/softhsm/libsofthsm2.so"
    public static let pin = "4711-pin"
    public static let tokenLabel = "share-recovery-test"
    public static let keyLabel = "master-wrap"
    public static let otherKeyLabel = "other-wrap"
    static let initializer = "/usr/bin/softhsm2-util"
    static let keyMaker = "/usr/bin/pkcs11-tool"

    /// Whether Debian's softhsm2 and opensc are installed (scripts/bootstrap.sh installs them).
    public static var available: Bool {
        [module, initializer, keyMaker].allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }
    /// Whether the suites using a token run: when it is installed, and always under CI, where a missing
    /// token fails them instead of passing by skipping.
    public static var runs: Bool { available || ProcessInfo.processInfo.environment["CI"] == "true" }
    public static let missingReason =
        "SoftHSM2 and OpenSC are not installed (scripts/bootstrap.sh installs softhsm2 and opensc)"

    /// The token's directory; the test's own files may go there too.
    public let directory: String

    public struct ToolFailed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Initializes the token and makes its two keys.
    public init() throws {
        guard Self.available else { throw ToolFailed(description: Self.missingReason) }
        directory = FileManager.default.temporaryDirectory.path + "/softhsm-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/tokens", withIntermediateDirectories: true)
        let configuration = directory + "/softhsm2.conf"
        try "directories.tokendir = \(directory)/tokens\nobjectstore.backend = file\nlog.level = ERROR\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        setenv("SOFTHSM2_CONF", configuration, 1)
        try Self.run(
            Self.initializer,
            ["--init-token", "--free", "--label", Self.tokenLabel, "--pin", Self.pin, "--so-pin", "so-\(Self.pin)"])
        for label in [Self.keyLabel, Self.otherKeyLabel] {
            try Self.run(
                Self.keyMaker,
                [
                    "--module", Self.module, "--token-label", Self.tokenLabel, "--login", "--pin", Self.pin,
                    "--keygen", "--key-type", "AES:32", "--label", label,
                ])
        }
    }

    /// Deletes the token and everything in its directory.
    public func remove() { try? FileManager.default.removeItem(atPath: directory) }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolFailed(
                description:
                    "\(executable) exited \(process.terminationStatus): \(String(decoding: output, as: UTF8.self))")
        }
    }
}
