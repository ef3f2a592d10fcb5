import ShareCrypto
import Testing

@Suite("Strict lowercase hex")
struct HexTests {
    /// RFC 4648 §10's base16 test vectors, in lower case.
    @Test(
        "RFC 4648 base16 vectors, lower case",
        arguments: [
            ("", ""), ("f", "66"), ("fo", "666f"), ("foo", "666f6f"), ("foob", "666f6f62"), ("fooba", "666f6f6261"),
            ("foobar", "666f6f626172"),
        ])
    func vectors(text: String, hex: String) {
        let bytes = Array(text.utf8)
        #expect(Hex.encode(bytes) == hex)
        #expect(Hex.decode(hex) == bytes)
    }

    /// Arrays and slices take the buffer's path, other sequences the copying one: both must agree, on
    /// every byte value.
    @Test("every byte value, from an array, a slice and a sequence without contiguous storage")
    func everyByte() {
        let bytes = (0...255).map { UInt8($0) }
        let expected = bytes.map { byte -> String in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        #expect(Hex.encode(bytes) == expected)
        #expect(Hex.encode(bytes[16..<32]) == String(expected.dropFirst(32).prefix(32)))
        #expect(Hex.encode(bytes.lazy.map { $0 }) == expected)
        #expect(Hex.encode(bytes.reversed()) == Hex.encode(Array(bytes.reversed())))
        #expect(Hex.decode(expected) == bytes)
    }

    @Test(
        "decode refuses odd lengths, upper case and other characters",
        arguments: ["0", "abc", "AB", "0g", " 00", "00\n"])
    func refusals(text: String) {
        #expect(Hex.decode(text) == nil)
    }
}
