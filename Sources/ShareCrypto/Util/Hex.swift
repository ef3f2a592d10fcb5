/// Strict lowercase hex, as every JSON form in docs/formats.md uses.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of the bytes.
    /// - Parameter bytes: Public bytes.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Callers in other modules get this generic unspecialised, where a byte-by-byte loop over the
        // sequence pays a witness call per byte (request ids and token checks run it per request):
        // arrays and slices go through one loop over their buffer, other sequences are copied first.
        if let text = bytes.withContiguousStorageIfAvailable(encode(buffer:)) { return text }
        return Array(bytes).withUnsafeBufferPointer(encode(buffer:))
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>) -> String {
        let digits = self.digits
        return String(unsafeUninitializedCapacity: 2 * buffer.count) { out in
            for (offset, byte) in buffer.enumerated() {
                out[2 * offset] = digits[Int(byte >> 4)]
                out[2 * offset + 1] = digits[Int(byte & 0x0F)]
            }
            return 2 * buffer.count
        }
    }

    /// Lowercase hex of a secret, into a secret buffer, without a branch or table lookup on the
    /// secret's nibbles (a recovery kit's code, RecoveryKit).
    /// - Parameter secret: The secret bytes.
    public static func encodeSecret(_ secret: SecureBytes) -> SecureBytes {
        SecureBytes(count: 2 * secret.count) { out in
            secret.withUnsafeBytes { bytes in
                for (offset, byte) in bytes.enumerated() {
                    out[2 * offset] = digit(byte >> 4)
                    out[2 * offset + 1] = digit(byte & 0x0F)
                }
            }
        }
    }

    /// '0'…'9', 'a'…'f' by arithmetic: `above9` is 0xFF exactly when (9 − nibble) borrows.
    private static func digit(_ nibble: UInt8) -> UInt8 {
        let above9 = UInt8(truncatingIfNeeded: (9 &- Int16(nibble)) >> 8)
        return nibble &+ 0x30 &+ (above9 & 0x27)
    }

    /// Decodes lowercase hex; `nil` for odd length, upper-case or any other character.
    /// - Parameter text: The hex text.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Decodes lowercase hex straight into a secret buffer.
    /// - Parameter text: The hex text.
    public static func decodeSecret(_ text: String) -> SecureBytes? {
        guard let bytes = decode(text) else { return nil }
        return SecureBytes(copying: bytes)
    }

    private static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
