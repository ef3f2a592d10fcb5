#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
package import ShareCrypto
import ShareRecovery

/// Reads the master key and webhook secret from their ``ServerConfiguration/SecretSource``.
package enum SecretLoading {
    /// Largest secret file read.
    static let maximumFileSize = 4096

    /// The master keys, one a line (blank lines ignored), each 32 bytes as 64 hex digits: the first seals
    /// and issues, every one opens and is accepted (docs/server.md, "Rotating the master key").
    /// - Throws: ``ServerStartError/Code/invalidConfiguration`` when the source is missing, holds no key, a
    ///   line that is not a key (by its line number, never its text) or one key twice.
    static func masterKeys(_ source: ServerConfiguration.SecretSource) throws(ServerStartError) -> [SecureBytes] {
        let what: String
        let text: SecureBytes
        switch source {
        case .value(let bytes):
            // A value given in code is the key itself (the tests' and the demo's), not hex lines.
            guard bytes.count == 32 else {
                throw ServerStartError(
                    .invalidConfiguration, "the master key must be 32 bytes (64 hex digits), got \(bytes.count)")
            }
            return [bytes]
        case .file(let path), .generatedFile(let path):
            what = "the master key file \(path)"
            text = try Self.text(source)
        case .environment(let name):
            what = "the environment variable \(name)"
            text = try Self.text(source)
        case .pkcs11Wrapped(let path, _):
            what = "the wrapped master key file \(path)"
            text = try Self.text(source)
        }
        var keys: [SecureBytes] = []
        for (line, value) in try lines(text) {
            let key = try decodeHex(value, what: "\(what), line \(line),")
            guard key.count == 32 else {
                throw ServerStartError(
                    .invalidConfiguration,
                    "\(what): line \(line) must be a master key of 32 bytes (64 hex digits), got \(key.count) bytes")
            }
            guard !keys.contains(key) else {
                throw ServerStartError(
                    .invalidConfiguration,
                    "\(what): line \(line) repeats key id \(SecretRing.keyId(of: key)): remove the repeated line")
            }
            keys.append(key)
        }
        guard !keys.isEmpty else { throw ServerStartError(.invalidConfiguration, "\(what) holds no master key") }
        return keys
    }

    /// The webhook secret's values, one a line (blank lines ignored), each at least 16 bytes; or another
    /// shared secret of the same rules (`what` names it in errors: the metrics token). The first value is
    /// sent, every one is accepted (``SecretRing``).
    /// - Throws: ``ServerStartError/Code/invalidConfiguration`` when the source is missing, holds no value
    ///   or a value that is too short (by its line number, never its text).
    static func webhookSecret(_ source: ServerConfiguration.SecretSource, what: String = "the webhook secret")
        throws(ServerStartError) -> SecretRing
    {
        let values = try lines(try text(source))
        for (line, value) in values where value.count < 16 {
            throw ServerStartError(
                .invalidConfiguration, "\(what) must be at least 16 bytes: line \(line) has \(value.count)")
        }
        return try SecretRing(values.map(\.value), what: what)
    }

    /// The non-blank lines of a secret's text, each without trailing `\r` and spaces, with their
    /// 1-based line numbers (for errors that must not quote a secret).
    package static func lines(_ text: SecureBytes) throws(ServerStartError) -> [(line: Int, value: SecureBytes)] {
        var ranges: [(line: Int, range: Range<Int>)] = []
        text.withUnsafeBytes { bytes in
            var start = 0
            var number = 1
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: "\n") {
                var end = index
                while end > start, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: " ") {
                    end -= 1
                }
                if end > start { ranges.append((number, start..<end)) }
                start = index + 1
                number += 1
            }
        }
        do {
            return try ranges.map { (line: $0.line, value: try text.slice($0.range)) }
        } catch {
            throw ServerStartError(.invalidConfiguration, "unreadable secret")
        }
    }

    /// The database password as the PostgreSQL driver takes it, a `String` (it keeps its own copy for
    /// the pool's logins, so a wiped buffer here would not shorten its life).
    /// - Throws: ``ServerStartError/Code/invalidConfiguration`` when the source is missing, empty or not UTF-8.
    static func databasePassword(_ source: ServerConfiguration.SecretSource) throws(ServerStartError) -> String {
        if case .generatedFile = source {
            throw ServerStartError(.invalidConfiguration, "a database password is never generated: give a file")
        }
        let secret = try text(source)
        guard secret.count > 0, let text = secret.withUnsafeBytes({ String(validating: $0, as: UTF8.self) }) else {
            throw ServerStartError(.invalidConfiguration, "the database password is empty or not UTF-8")
        }
        return text
    }

    /// A text secret's bytes: the value, the file's or variable's (one trailing newline dropped from a file).
    static func text(_ source: ServerConfiguration.SecretSource) throws(ServerStartError) -> SecureBytes {
        switch source {
        case .value(let bytes): return bytes
        case .file(let path): return try trimmed(try readFile(path))
        case .environment(let name):
            guard let text = environment(name) else {
                throw ServerStartError(.invalidConfiguration, "the environment variable \(name) is not set")
            }
            return text
        case .generatedFile(let path): return try trimmed(try generatedFile(path))
        case .pkcs11Wrapped(let path, let key): return try PKCS11MasterKeyFile.unwrap(path: path, location: key)
        }
    }

    /// The environment variable's bytes, or `nil` when unset or empty.
    static func environment(_ name: String) -> SecureBytes? {
        guard let pointer = getenv(name) else { return nil }
        let count = strlen(pointer)
        guard count > 0 else { return nil }
        return SecureBytes(copying: UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A file's bytes, read straight into a secret buffer.
    static func readFile(_ path: String) throws(ServerStartError) -> SecureBytes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ServerStartError(.invalidConfiguration, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var total = 0
        var failed = false
        let buffer = SecureBytes(count: maximumFileSize + 1) { out in
            while total < out.count {
                let got = read(descriptor, out.baseAddress! + total, out.count - total)
                if got < 0, errno == EINTR { continue }
                if got < 0 { failed = true }
                if got <= 0 { break }
                total += got
            }
        }
        guard !failed else { throw ServerStartError(.invalidConfiguration, "cannot read \(path)") }
        guard total <= maximumFileSize else {
            throw ServerStartError(.invalidConfiguration, "\(path) is too large for a secret")
        }
        do {
            return try buffer.slice(0..<total)
        } catch {
            throw ServerStartError(.invalidConfiguration, "cannot read \(path)")
        }
    }

    /// Reads the file, or creates it with 32 random bytes as hex (mode 0600). The new file is written under a
    /// temporary name and linked into place, so concurrent starters never see a half-written secret.
    static func generatedFile(_ path: String) throws(ServerStartError) -> SecureBytes {
        if access(path, F_OK) == 0 { return try readFile(path) }
        let random = SystemRandom().secureBytes(count: 32)
        let temporary = "\(path).tmp-\(Hex.encode(SystemRandom().bytes(count: 8)))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServerStartError(
                .invalidConfiguration, "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        let line = SecureBytes.concatenating([Hex.encodeSecret(random), SecureBytes(copying: [UInt8(ascii: "\n")])])
        let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == 65, synced == 0 else {
            unlink(temporary)
            throw ServerStartError(.invalidConfiguration, "cannot write \(temporary)")
        }
        let linked = link(temporary, path)
        let linkError = errno
        unlink(temporary)
        guard linked == 0 || linkError == EEXIST else {
            throw ServerStartError(
                .invalidConfiguration, "cannot create \(path): \(String(cString: strerror(linkError)))")
        }
        return try readFile(path)
    }

    /// Without one trailing `\n` or `\r\n`.
    static func trimmed(_ bytes: SecureBytes) throws(ServerStartError) -> SecureBytes {
        var end = bytes.count
        bytes.withUnsafeBytes { raw in
            if end > 0, raw[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if end > 0, raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        do {
            return try bytes.slice(0..<end)
        } catch {
            throw ServerStartError(.invalidConfiguration, "unreadable secret")
        }
    }

    /// Hex (either case) into a secret buffer.
    static func decodeHex(_ text: SecureBytes, what: String) throws(ServerStartError) -> SecureBytes {
        guard text.count % 2 == 0 else { throw ServerStartError(.invalidConfiguration, "\(what) is not hex") }
        var valid = true
        let decoded = SecureBytes(count: text.count / 2) { out in
            text.withUnsafeBytes { raw in
                func nibble(_ character: UInt8) -> UInt8? {
                    switch character {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
                    case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
                    default: nil
                    }
                }
                for index in 0..<out.count {
                    guard let high = nibble(raw[2 * index]), let low = nibble(raw[2 * index + 1]) else {
                        valid = false
                        return
                    }
                    out[index] = high << 4 | low
                }
            }
        }
        guard valid else { throw ServerStartError(.invalidConfiguration, "\(what) is not hex") }
        return decoded
    }
}

/// Keys derived from one master key (HKDF-SHA256, one `info` label each), so no key serves two purposes.
struct DerivedKeys: Sendable {
    /// The master key's key id (``SecretRing/keyIdBytes(of:)``): what a value sealed under it carries.
    let keyId: [UInt8]
    /// XChaCha20-Poly1305 key for secrets at rest.
    let atRest: SecureBytes
    /// HMAC-SHA256 key for tokens.
    let token: SecureBytes
    /// HMAC-SHA256 key for one-time code hashes.
    let otp: SecureBytes
    /// HMAC-SHA256 key for the scopes and fingerprints of idempotency keys (a request body may hold a
    /// one-time code, so its fingerprint must not be an unkeyed hash).
    let idempotency: SecureBytes

    init(masterKey: SecureBytes) throws(ServerStartError) {
        func derive(_ label: String) throws(ServerStartError) -> SecureBytes {
            do {
                return try HKDF.deriveKey(
                    inputKeyMaterial: masterKey, salt: Array("share-recovery-server".utf8),
                    info: Array("share-recovery-server v1 \(label)".utf8),
                    outputCount: 32)
            } catch {
                throw ServerStartError(.invalidConfiguration, "key derivation failed")
            }
        }
        keyId = SecretRing.keyIdBytes(of: masterKey)
        atRest = try derive("at-rest")
        token = try derive("token")
        otp = try derive("otp")
        idempotency = try derive("idempotency")
    }
}
