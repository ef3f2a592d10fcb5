/// Strict standard base64 (RFC 4648 §4): the standard alphabet, padding required, no whitespace,
/// and zero pad bits, so every byte string has exactly one accepted text.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((chunk >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let chunk = UInt32(input[index]) << 16
            out += [
                alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "="),
            ]
        } else if rest == 2 {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out += [
                alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)], alphabet[Int(chunk >> 6 & 63)],
                UInt8(ascii: "="),
            ]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strictly; `nil` for anything but canonical padded base64.
    public static func decode(_ text: String) -> [UInt8]? { decode(utf8: Array(text.utf8)) }

    /// Decodes strictly from UTF-8 bytes.
    public static func decode(utf8 text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let isLast = index + 4 == text.count
            let c = text[index..<index + 4]
            let padding = isLast ? c.reversed().prefix { $0 == UInt8(ascii: "=") }.count : 0
            guard padding <= 2 else { return nil }
            var chunk: UInt32 = 0
            for (offset, character) in c.enumerated() {
                if offset >= 4 - padding {
                    chunk <<= 6
                    continue
                }
                let value = values[Int(character)]
                guard value != 0xFF else { return nil }
                chunk = chunk << 6 | UInt32(value)
            }
            let bytes = [UInt8(chunk >> 16 & 0xFF), UInt8(chunk >> 8 & 0xFF), UInt8(chunk & 0xFF)]
            // Non-zero bits under the padding would give a second text for the same bytes.
            if padding == 1, bytes[2] != 0 { return nil }
            if padding == 2, bytes[1] != 0 || bytes[2] != 0 { return nil }
            out += bytes.prefix(3 - padding)
            index += 4
        }
        return out
    }
}
