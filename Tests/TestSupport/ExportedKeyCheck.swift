public import ShareCrypto

/// Reads an exported private key (docs/eject.md) back with code of the tests' own and computes its
/// public key by the bare C call (`RawPrimitives.publicKey`), so that the check shares nothing with
/// the engine's rebuild, its `Scalar` and `Point` types, or its hex and Base58 encoders.
public enum ExportedKeyCheck {
    /// 64 hex digits (either case) to 32 bytes.
    public static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }

    /// Base58 (Bitcoin alphabet) to bytes, by schoolbook multiply-and-add over big-endian bytes; no
    /// checksum check (the caller checks it).
    public static func base58(_ text: String) -> [UInt8]? {
        let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
        var value: [UInt8] = []
        for character in text {
            guard let digit = alphabet.firstIndex(of: character) else { return nil }
            var carry = digit
            for index in value.indices.reversed() {
                let product = Int(value[index]) * 58 + carry
                value[index] = UInt8(product % 256)
                carry = product / 256
            }
            while carry > 0 {
                value.insert(UInt8(carry % 256), at: 0)
                carry /= 256
            }
        }
        return [UInt8](repeating: 0, count: text.prefix { $0 == "1" }.count) + value
    }

    /// The public key of a private key written as 64 hex digits, or `nil` when the text or the key is bad.
    public static func publicKey(ofHex text: String, curve: Curve) -> [UInt8]? {
        hexBytes(text).flatMap { RawPrimitives.publicKey(ofPrivateKey: $0, curve: curve) }
    }

    /// What a WIF text holds, checked: `(version, key)`, or `nil` when it is not 38 bytes ending in
    /// `0x01` with a matching double-SHA-256 checksum.
    public static func wif(_ text: String) -> (version: UInt8, key: [UInt8])? {
        guard let decoded = base58(text), decoded.count == 38 else { return nil }
        let payload = Array(decoded.prefix(34))
        guard Array(decoded.suffix(4)) == Array(SHA256.hash(SHA256.hash(payload)).prefix(4)), payload[33] == 0x01 else {
            return nil
        }
        return (payload[0], Array(payload[1..<33]))
    }
}
