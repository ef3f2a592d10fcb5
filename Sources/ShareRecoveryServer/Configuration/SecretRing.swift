package import ShareCrypto
import ShareRecovery

/// The values of one secret (the webhook secret, the metrics token): a secret file or variable holds one
/// value a line. The first is the one this server sends or signs with; every one is accepted, so a value
/// is rotated without downtime (docs/server.md, "Rotating secrets").
package struct SecretRing: Sendable {
    /// The values, the signing one first; never empty.
    package let values: [SecureBytes]

    /// - Parameter values: The values, the signing one first.
    /// - Throws: ``ServerStartError`` `invalidConfiguration` when there is none (`what` names the secret).
    package init(_ values: [SecureBytes], what: String) throws(ServerStartError) {
        guard !values.isEmpty else {
            throw ServerStartError(.invalidConfiguration, "\(what) holds no value: write one a line")
        }
        self.values = values
    }

    /// The value sent or signed with: the first.
    package var signing: SecureBytes { values[0] }

    /// Whether `offered` is one of the values. Every value is compared, each in constant time, so the
    /// answer's timing tells neither which value matched nor how much of one.
    package func accepts(_ offered: SecureBytes) -> Bool {
        var matched = false
        for value in values where value == offered { matched = true }
        return matched
    }

    /// The signing value's key id (``keyId(of:)``): what operators compare across processes.
    package var keyId: String { Self.keyId(of: signing) }

    /// A value's key id: 8 hex digits of HMAC-SHA256 keyed with the value over a fixed label. It names a
    /// value without revealing it, so logs and metrics may carry it; two processes showing different key
    /// ids sign with different values.
    package static func keyId(of value: SecureBytes) -> String { Hex.encode(keyIdBytes(of: value)) }

    /// A value's key id as its 4 bytes: what a sealed value's header carries (``AtRestSealer``).
    package static func keyIdBytes(of value: SecureBytes) -> [UInt8] {
        let tag = HMACSHA256.authenticate(Array("share-recovery key id v1".utf8), key: value)
        return tag.withUnsafeBytes { Array($0.prefix(4)) }
    }
}
