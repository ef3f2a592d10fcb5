/// Ethereum account addresses (docs/formats.md §12).
public enum EthereumAddress {
    /// The 20-byte address of a secp256k1 key: the last 20 bytes of Keccak-256 of `X || Y`.
    /// - Parameter publicKey: A secp256k1 point.
    /// - Returns: 20 bytes.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 point.
    public static func bytes(of publicKey: Point) throws -> [UInt8] {
        Array(Keccak256.hash(try publicKey.secp256k1Coordinates()).suffix(20))
    }

    /// The address as `0x` + 40 hex digits with EIP-55's mixed-case checksum.
    /// - Parameter publicKey: A secp256k1 point.
    /// - Returns: The checksummed address text.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 point.
    public static func checksummed(_ publicKey: Point) throws -> String {
        checksummed(address: try bytes(of: publicKey))
    }

    /// EIP-55: a letter digit is upper case where the matching nibble of Keccak-256 of the lowercase
    /// hex text is 8 or more.
    /// - Parameter address: 20 address bytes.
    /// - Returns: `0x` + the checksummed hex.
    public static func checksummed(address: [UInt8]) -> String {
        let lower = Array(Hex.encode(address).utf8)
        let hash = Keccak256.hash(lower)
        var text = [UInt8]()
        for (index, digit) in lower.enumerated() {
            let nibble = index % 2 == 0 ? hash[index / 2] >> 4 : hash[index / 2] & 0x0F
            text.append(digit >= UInt8(ascii: "a") && nibble >= 8 ? digit - 0x20 : digit)
        }
        return "0x" + String(decoding: text, as: UTF8.self)
    }
}
