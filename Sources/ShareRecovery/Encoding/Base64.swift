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
        // Written in place: the messages of a threshold ECDSA signature run to 70 KB.
        return String(unsafeUninitializedCapacity: (input.count + 2) / 3 * 4) { out in
            input.withUnsafeBufferPointer { input in
                alphabet.withUnsafeBufferPointer { alphabet in
                    func character(_ chunk: UInt32, _ shift: UInt32) -> UInt8 { alphabet[Int(chunk >> shift & 63)] }
                    var index = 0
                    var written = 0
                    while index + 3 <= input.count {
                        let chunk =
                            UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                        out[written] = character(chunk, 18)
                        out[written + 1] = character(chunk, 12)
                        out[written + 2] = character(chunk, 6)
                        out[written + 3] = character(chunk, 0)
                        index += 3
                        written += 4
                    }
                    let rest = input.count - index
                    if rest > 0 {
                        let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                        out[written] = character(chunk, 18)
                        out[written + 1] = character(chunk, 12)
                        out[written + 2] = rest == 2 ? character(chunk, 6) : UInt8(ascii: "=")
                        out[written + 3] = UInt8(ascii: "=")
                        written += 4
                    }
                    return written
                }
            }
        }
    }

    /// Decodes strictly; `nil` for anything but canonical padded base64.
    public static func decode(_ text: String) -> [UInt8]? { decode(utf8: Array(text.utf8)) }

    /// Decodes strictly from UTF-8 bytes.
    public static func decode(utf8 text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        guard !text.isEmpty else { return [] }
        let equals = UInt8(ascii: "=")
        let padding = text[text.count - 1] != equals ? 0 : text[text.count - 2] != equals ? 1 : 2
        // Every character's value ORed together: one outside the alphabet (0xFF, '=' included) sets the
        // top bit, so one check at the end refuses it.
        var seen: UInt8 = 0
        var padBits: UInt8 = 0
        let out = [UInt8](unsafeUninitializedCapacity: text.count / 4 * 3) { out, written in
            text.withUnsafeBufferPointer { text in
                values.withUnsafeBufferPointer { values in
                    func value(_ at: Int) -> UInt32 {
                        let value = values[Int(text[at])]
                        seen |= value
                        return UInt32(value)
                    }
                    let full = text.count - (padding > 0 ? 4 : 0)
                    var index = 0
                    var count = 0
                    while index < full {
                        let chunk =
                            value(index) << 18 | value(index + 1) << 12 | value(index + 2) << 6 | value(index + 3)
                        out[count] = UInt8(truncatingIfNeeded: chunk >> 16)
                        out[count + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                        out[count + 2] = UInt8(truncatingIfNeeded: chunk)
                        index += 4
                        count += 3
                    }
                    if padding > 0 {
                        let first = value(index), second = value(index + 1)
                        let third = padding == 1 ? value(index + 2) : 0
                        let chunk = first << 18 | second << 12 | third << 6
                        out[count] = UInt8(truncatingIfNeeded: chunk >> 16)
                        count += 1
                        if padding == 1 {
                            out[count] = UInt8(truncatingIfNeeded: chunk >> 8)
                            count += 1
                        }
                        // Non-zero bits under the padding would give a second text for the same bytes.
                        padBits = UInt8(truncatingIfNeeded: padding == 1 ? chunk : chunk >> 8 | chunk)
                    }
                    written = count
                }
            }
        }
        guard seen & 0x80 == 0, padBits == 0 else { return nil }
        return out
    }
}
