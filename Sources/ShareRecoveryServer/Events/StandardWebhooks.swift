package import ShareCrypto
import ShareRecovery

/// Signing per the Standard Webhooks specification (standardwebhooks.com): the signature is
/// `v1,` and the base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the
/// bytes of a `whsec_<base64>` secret.
package struct StandardWebhooksSigner: Sendable {
    /// The prefix of every secret in the secret file.
    package static let secretPrefix = "whsec_"
    /// The specification's bounds on a secret's decoded length.
    package static let secretLengths = 24...64

    /// The decoded secrets, the signing one first.
    private let secrets: SecretRing

    /// - Parameters:
    ///   - secrets: Decoded secrets, the signing one first; at least one.
    ///   - source: What holds them, for the error when there is none.
    package init(secrets: [SecureBytes], source: String) throws(ServerStartError) {
        self.secrets = try SecretRing(secrets, what: "\(source) (whsec_<base64> secrets)")
    }

    /// The signing secret's key id (``SecretRing/keyId``), for the start's log line.
    package var keyId: String { secrets.keyId }

    /// How many secrets it accepts (above 1 while a secret is rotated).
    package var count: Int { secrets.values.count }

    /// Reads a secret file: one `whsec_…` secret per line (blank lines ignored), the first signs; the
    /// others are there so a receiver can be moved to a new secret without a gap (write the new one
    /// first, keep the old one after it until every receiver has the new one).
    /// - Throws: ``ServerStartError`` `invalidConfiguration` naming the line that is not a secret.
    package init(secretFile path: String) throws(ServerStartError) {
        try self.init(secretText: try SecretLoading.readFile(path), source: path)
    }

    /// Parses the text of a secret file (``init(secretFile:)``).
    package init(secretText: SecureBytes, source: String) throws(ServerStartError) {
        var secrets: [SecureBytes] = []
        for (line, text) in try SecretLoading.lines(secretText) {
            var failure: String?
            text.withUnsafeBytes { bytes in
                let prefix = Array(Self.secretPrefix.utf8)
                guard bytes.starts(with: prefix),
                    var decoded = Base64.decode(utf8: Array(bytes.dropFirst(prefix.count)))
                else {
                    failure = "line \(line) of \(source) is not a whsec_<base64> secret"
                    return
                }
                defer { for index in decoded.indices { decoded[index] = 0 } }
                guard Self.secretLengths.contains(decoded.count) else {
                    failure = "the secret on line \(line) of \(source) decodes to \(decoded.count) bytes, not 24 to 64"
                    return
                }
                secrets.append(SecureBytes(copying: decoded))
            }
            if let failure { throw ServerStartError(.invalidConfiguration, failure) }
        }
        try self.init(secrets: secrets, source: source)
    }

    /// The three headers (name, value) of a signed message: `webhook-id`, `webhook-timestamp` (Unix seconds) and
    /// `webhook-signature` (``signature(id:timestamp:body:)``).
    package func headers(id: String, timestamp: Int64, body: String) -> [(String, String)] {
        [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", signature(id: id, timestamp: timestamp, body: body)),
        ]
    }

    /// The `webhook-signature` value: the first secret's signature, `v1,<base64>`.
    package func signature(id: String, timestamp: Int64, body: String) -> String {
        Self.signature(id: id, timestamp: timestamp, body: body, secret: secrets.signing)
    }

    /// Whether `header` (space-separated `v1,<base64>` signatures) holds a signature of the message by
    /// any of the secrets, compared in constant time.
    package func verifies(header: String, id: String, timestamp: Int64, body: String) -> Bool {
        let offered = header.split(separator: " ").compactMap { signature -> SecureBytes? in
            guard signature.hasPrefix("v1,"), let bytes = Base64.decode(String(signature.dropFirst(3))) else {
                return nil
            }
            return SecureBytes(copying: bytes)
        }
        return secrets.values.contains { secret in
            let expected = Self.tag(id: id, timestamp: timestamp, body: body, secret: secret)
            return offered.contains { $0 == expected }
        }
    }

    private static func signature(id: String, timestamp: Int64, body: String, secret: SecureBytes) -> String {
        "v1," + tag(id: id, timestamp: timestamp, body: body, secret: secret).withUnsafeBytes { Base64.encode($0) }
    }

    private static func tag(id: String, timestamp: Int64, body: String, secret: SecureBytes) -> SecureBytes {
        HMACSHA256.authenticate(Array("\(id).\(timestamp).\(body)".utf8), key: secret)
    }
}
