import Foundation

/// scripts/independent-verify-ecdsa.py (the ECDSA verifier of scripts/independent-verify.sh:
/// coincurve, OpenSSL, eth-keys' address recovery) and eth-account, run on what the CLI printed, so
/// tests check their signatures and ejected keys with libraries that know nothing of share-recovery.
public enum IndependentECDSAVerifier {
    /// The modules the checks import.
    static let modules = "coincurve, cryptography, eth_keys, eth_utils, eth_account, Crypto"

    /// A Python with the verifier's packages (scripts/verify-requirements.txt):
    /// `$SHARE_RECOVERY_TEST_VERIFY_PYTHON`, else `.build-venv/bin/python` (scripts/verify-venv.sh),
    /// else `.build/events-venv/bin/python` (scripts/events-venv.sh installs them too); nil when none has them.
    public static func python() -> String? {
        var candidates = [
            StandardWebhooksReceiver.root.appendingPathComponent(".build-venv/bin/python").path,
            StandardWebhooksReceiver.root.appendingPathComponent(".build/events-venv/bin/python").path,
        ]
        if let python = ProcessInfo.processInfo.environment["SHARE_RECOVERY_TEST_VERIFY_PYTHON"], !python.isEmpty {
            candidates = [python]
        }
        return candidates.first { path in
            FileManager.default.isExecutableFile(atPath: path)
                && (try? run(path, ["-c", "import \(modules)"]).status) == 0
        }
    }

    /// Why a test that needs the verifier did not run.
    public static let skipped =
        "independent ECDSA verification SKIPPED: set SHARE_RECOVERY_TEST_VERIFY_PYTHON or run `bash scripts/events-venv.sh` (make test does)"

    /// One signature as the verifier reads it: what `sign --mode ecdsa` printed, the message, the
    /// hash and what `derive --address eth` printed for the wallet (whose address it must recover).
    public static func line(signed: String, message: [UInt8], hash: String = "keccak256", derived: String) throws
        -> String
    {
        guard var object = try JSONSerialization.jsonObject(with: Data(signed.utf8)) as? [String: Any],
            let derive = try JSONSerialization.jsonObject(with: Data(derived.utf8)) as? [String: Any]
        else { throw Failure(description: "not JSON objects: \(signed) / \(derived)") }
        object["message"] = message.map { String(format: "%02x", $0) }.joined()
        object["hash"] = hash
        object["derive"] = derive
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Runs the verifier on the lines; the outcome's status is 0 when every check passed.
    public static func verify(lines: [String], python: String, directory: String) throws -> (
        status: Int32, output: String
    ) {
        let file = URL(fileURLWithPath: directory).appendingPathComponent("ecdsa-signatures.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        let script = StandardWebhooksReceiver.root.appendingPathComponent("scripts/independent-verify-ecdsa.py").path
        return try run(python, [script, file.path])
    }

    /// The Ethereum address eth-account gives a hex private key (`Account.from_key`).
    public static func ethAccountAddress(privateKeyHex: String, python: String) throws -> String {
        let result = try run(
            python,
            [
                "-c",
                "import sys; from eth_account import Account; print(Account.from_key(sys.stdin.read().strip()).address)",
            ], input: privateKeyHex)
        guard result.status == 0 else { throw Failure(description: "eth-account: \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs a child process; stdout and stderr together. The key goes on stdin, never in arguments.
    private static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
