import Foundation
import ShareRecovery
import TestSupport
import Testing

/// The strict base64 of every JSON byte field (docs/formats.md): RFC 4648's vectors, agreement with
/// Foundation's encoder on every length, and one accepted text per byte string.
@Suite("Strict base64")
struct Base64Tests {
    @Test("RFC 4648 §10's vectors, both ways")
    func rfcVectors() {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    @Test("every length up to 300 agrees with Foundation's encoder and decodes back")
    func agreesWithFoundation() {
        var generator = SplitMix64(seed: 0xB64)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let text = Base64.encode(bytes)
            #expect(text == Data(bytes).base64EncodedString(), "length \(length)")
            #expect(Base64.decode(text) == bytes, "length \(length)")
        }
    }

    @Test(
        "non-canonical or malformed texts are refused",
        arguments: [
            "Zg", "Zg=", "Zh==", "Zm9=", "Zm8", "Z===", "====", "Zm9v\n", " Zm9v", "Zm=v", "Zg==Zg==", "Zm-v", "Zm_v",
            "Zm9vYg==\u{0}", "Zm9v YmFy", "Zm9vYmF\u{e9}",
        ])
    func refused(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
