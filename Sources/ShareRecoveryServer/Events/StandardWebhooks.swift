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
    private let secrets: [SecureBytes]

    /// - Parameter secrets: Decoded secrets, the signing one first; at least one.
    package init(secrets: [SecureBytes]) throws(ServerStartError) {
        guard !secrets.isEmpty else {
            throw ServerStartError(.invalidConfiguration, "the events secret file holds no whsec_ secret")
        }
        self.secrets = secrets
    }

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
        var failure: String?
        secretText.withUnsafeBytes { bytes in
            for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                .enumerated()
            {
                var text = line[...]
                while let last = text.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") {
                    text = text.dropLast()
                }
                guard !text.isEmpty else { continue }
                let prefix = Array(Self.secretPrefix.utf8)
                guard text.starts(with: prefix), var decoded = Base64.decode(utf8: Array(text.dropFirst(prefix.count)))
                else {
                    failure = "line \(number + 1) of \(source) is not a whsec_<base64> secret"
                    return
                }
                defer { for index in decoded.indices { decoded[index] = 0 } }
                guard Self.secretLengths.contains(decoded.count) else {
                    failure =
                        "the secret on line \(number + 1) of \(source) decodes to \(decoded.count) bytes, not 24 to 64"
                    return
                }
                secrets.append(SecureBytes(copying: decoded))
            }
        }
        if let failure { throw ServerStartError(.invalidConfiguration, failure) }
        try self.init(secrets: secrets)
    }

    /// The `webhook-signature` value: the first secret's signature, `v1,<base64>`.
    package func signature(id: String, timestamp: Int64, body: String) -> String {
        Self.signature(id: id, timestamp: timestamp, body: body, secret: secrets[0])
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
        return secrets.contains { secret in
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
