import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer

/// File input and output for the CLI. Secrets are read into ``SecureBytes`` and written with 0600.
enum Files {
    /// Largest file the CLI reads: every input here is small.
    static let maximumSize = 16 * 1024 * 1024

    static func read(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError.file("cannot read \(path): there is no such file, or this user may not read it")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: maximumSize + 1) ?? Data()
        guard data.count <= maximumSize else { throw CLIError.file("\(path) is larger than \(maximumSize) bytes") }
        return [UInt8](data)
    }

    static func readText(_ path: String) throws -> String {
        guard let text = String(validating: try read(path), as: UTF8.self) else {
            throw CLIError.file("\(path) is not UTF-8")
        }
        return text
    }

    /// Text with at most one trailing newline removed (docs/formats.md §5 allows one in a cipherText file).
    static func readTrimmedLine(_ path: String) throws -> String {
        var text = try readText(path)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func write(_ text: String, to path: String, secret: Bool = false) throws {
        try write(Array(text.utf8), to: path, secret: secret)
    }

    static func write(_ bytes: [UInt8], to path: String, secret: Bool = false) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Secret files are created 0600 before any byte is written.
        let created = FileManager.default.createFile(
            atPath: path, contents: Data(bytes), attributes: [.posixPermissions: secret ? 0o600 : 0o644])
        guard created else { throw CLIError.file("cannot write \(path)") }
    }

    static func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A secret file's bytes with at most one trailing newline removed (passcodes, passphrases, passwords).
    static func readSecretLine(_ path: String) throws -> SecureBytes {
        let raw = SecureBytes(copying: try read(path))
        return try raw.withUnsafeBytes { bytes in
            bytes.last == UInt8(ascii: "\n") ? try raw.slice(0..<(bytes.count - 1)) : raw
        }
    }

    /// A webhook secret file's signing value: its first non-blank line, without trailing `\r` and spaces.
    /// A server's secret file may hold several values during a rotation (docs/server.md, "Rotating
    /// secrets"); a client sends the first, which every server accepts.
    static func readWebhookSecret(_ path: String) throws -> SecureBytes {
        guard let first = try SecretLoading.lines(SecureBytes(copying: try read(path))).first else {
            throw CLIError.file("\(path) holds no webhook secret")
        }
        return first.value
    }

    /// Writes a new signing set as DIR/share-<i>.json (with secrets, mode 0600).
    static func writeSigningSet(_ shares: [ShareRecord], to directory: String) throws {
        try makeDirectory(directory)
        for share in shares {
            try write(
                share.json(includingSecret: true) + "\n", to: "\(directory)/share-\(share.partyIndex).json",
                secret: true)
        }
    }

    /// The backup secret for a method from `--secret-file`: UTF-8 text for Argon2id methods (one
    /// trailing newline ignored); 32 raw bytes or 64 hex digits for HKDF methods.
    static func readSecret(_ path: String, method: BackupMethod) throws -> BackupSecret {
        switch method.kdf {
        case .argon2id13:
            return try BackupSecret.text(utf8: try readSecretLine(path))
        case .hkdfSHA256:
            let raw = SecureBytes(copying: try read(path))
            if raw.count == 32 { return .keyMaterial(raw) }
            let text = raw.withUnsafeBytes { bytes -> String? in
                var slice = bytes[...]
                if slice.last == UInt8(ascii: "\n") { slice = slice.dropLast() }
                return String(validating: slice, as: UTF8.self)
            }
            if let text, let key = Hex.decodeSecret(text), key.count == 32 { return .keyMaterial(key) }
            throw ShareRecoveryError(
                .invalidKeyMaterial, "\(method) secret file must hold 32 raw bytes or 64 hex digits")
        }
    }

    static func readShare(_ path: String) throws -> ShareRecord {
        try ShareRecord(json: try readText(path))
    }

    static func readCustodianKey(_ path: String) throws -> SealingKeyPair {
        let text = try readTrimmedLine(path)
        guard let bytes = Hex.decodeSecret(text), bytes.count == 32 else {
            throw ShareRecoveryError(.invalidKeyMaterial, "custodian key file must hold 64 hex digits")
        }
        do {
            return try SealingKeyPair(secretKey: bytes)
        } catch {
            throw ShareRecoveryError(.invalidKeyMaterial, "the custodian key is unusable")
        }
    }

    static func readHexKey(_ path: String, count: Int) throws -> [UInt8] {
        guard let bytes = Hex.decode(try readTrimmedLine(path)), bytes.count == count else {
            throw ShareRecoveryError(.invalidKeyMaterial, "\(path) must hold \(count * 2) hex digits")
        }
        return bytes
    }

    /// A JSON array of §6 strings.
    static func readCustodianShares(_ path: String) throws -> [String] {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(try read(path), maximumSize: maximumSize)
        } catch {
            throw ShareRecoveryError(.malformedInput, "\(path) is not JSON: \(error)")
        }
        guard case .array(let elements) = value else {
            throw ShareRecoveryError(.malformedInput, "\(path) must hold a JSON array of custodian share strings")
        }
        return try elements.map { element in
            guard case .string(let text) = element else {
                throw ShareRecoveryError(.malformedInput, "\(path) must hold strings")
            }
            return text
        }
    }
}
