/// Bitcoin's Base58Check: the payload and the first four bytes of its double SHA-256, written in
/// base 58 with the alphabet that leaves out 0, O, I and l; each leading zero byte is a leading `1`.
/// BIP-32 writes extended keys in it. For public data only (the conversion is not constant time).
public enum Base58Check {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    private static let digitOf: [UInt8: Int] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, $0) })

    /// Encodes a payload with its checksum.
    /// - Parameter payload: The bytes (e.g. the 78 bytes of a BIP-32 extended key).
    /// - Returns: The Base58Check string.
    public static func encode(_ payload: [UInt8]) -> String {
        let bytes = payload + checksum(payload)
        let zeros = bytes.prefix { $0 == 0 }.count
        // Base-58 digits, least significant first, by repeated multiply-and-add over the bytes.
        var digits: [Int] = []
        for byte in bytes[zeros...] {
            var carry = Int(byte)
            for i in digits.indices {
                carry += digits[i] << 8
                digits[i] = carry % 58
                carry /= 58
            }
            while carry > 0 {
                digits.append(carry % 58)
                carry /= 58
            }
        }
        let characters = [UInt8](repeating: alphabet[0], count: zeros) + digits.reversed().map { alphabet[$0] }
        return String(decoding: characters, as: UTF8.self)
    }

    /// Decodes a string and checks its checksum.
    /// - Parameter string: The Base58Check string.
    /// - Returns: The payload without its checksum.
    /// - Throws: ``ShareCryptoError/Code/invalidEncoding`` for a character outside the alphabet, fewer
    ///   than four bytes, or a checksum that does not match.
    public static func decode(_ string: String) throws -> [UInt8] {
        let characters = Array(string.utf8)
        let ones = characters.prefix { $0 == alphabet[0] }.count
        // Bytes, least significant first.
        var bytes: [UInt8] = []
        for character in characters[ones...] {
            guard let digit = digitOf[character] else {
                throw ShareCryptoError(
                    .invalidEncoding, "\"\(string.prefix(120))\" has a character outside the Base58 alphabet")
            }
            var carry = digit
            for i in bytes.indices {
                carry += Int(bytes[i]) * 58
                bytes[i] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        let decoded = [UInt8](repeating: 0, count: ones) + bytes.reversed()
        guard decoded.count >= 4 else {
            throw ShareCryptoError(.invalidEncoding, "a Base58Check string holds at least its 4-byte checksum")
        }
        let payload = Array(decoded.dropLast(4))
        guard checksum(payload) == Array(decoded.suffix(4)) else {
            throw ShareCryptoError(
                .invalidEncoding, "the Base58Check checksum does not match: a character is wrong or missing")
        }
        return payload
    }

    private static func checksum(_ payload: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(SHA256.hash(payload)).prefix(4))
    }
}
