import ShareCrypto
import Testing

@testable import ShareRecovery
@testable import ShareRecoveryVectors

/// The text encodings every format relies on: strict base64 (§5, §6), strict JSON (§4, §6, §9),
/// and §6's timestamps.
@Suite("Formats")
struct FormatTests {
    /// A new share's round trip through its binary form skips the second x·G only when the bytes
    /// describe exactly the share they were written from.
    @Test(arguments: Curve.allCases)
    func aRoundTripMustReproduceItsShare(curve: Curve) throws {
        let set = try KeyGeneration.generate(curve: curve, walletId: "round-trip", threshold: 2, parties: 3)
        let parsed = try ShareRecord(binary: try set[0].binary(), reproducing: set[0])
        #expect(parsed.secret == set[0].secret && parsed.setId == set[0].setId && parsed.partyIndex == 1)
        #expect(throws: ShareRecoveryError(.invalidShare, "")) {
            try ShareRecord(binary: try set[1].binary(), reproducing: set[0])
        }
        let otherSet = try KeyGeneration.generate(curve: curve, walletId: "round-trip", threshold: 2, parties: 3)
        #expect(throws: ShareRecoveryError(.invalidShare, "")) {
            try ShareRecord(binary: try otherSet[0].binary(), reproducing: set[0])
        }
    }

    // MARK: Base64

    @Test(arguments: 0...12)
    func base64RoundTrips(count: Int) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        let text = Base64.encode(bytes)
        #expect(text.count == (count + 2) / 3 * 4)
        #expect(Base64.decode(text) == bytes)
    }

    @Test func base64KnownAnswers() {
        // RFC 4648 §10.
        let cases = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in cases {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }

    @Test(arguments: [
        "Zg", "Zg=", "Zm9", "Zm9vY",  // missing padding or wrong length
        "Zh==", "Zm9=", "Zm9vYh==", "Zm9vYmF=",  // non-zero bits under the padding
        "Zm9v\n", "Zm 9v", " Zm9v", "Zm9v\r\n", "Zm 9", "Zm9v\nZm8", "\tZm9vYmF", "Zm9vYg=\n",  // whitespace anywhere
        "-_8=", "Zm9v!A==", "Zm9vYg=\u{FF1D}",  // other alphabets and characters
        "=Zm9", "Zg==Zg==", "Z===", "====", "Zm=v",  // padding in the wrong place
    ])
    func base64RejectsNonCanonicalText(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func cipherTextTextRefusesWhitespace() throws {
        let random = DeterministicRandom(seed: Array("base64".utf8))
        let record = try VectorFixtures.dealSet(
            curve: .ed25519, walletId: "w", kind: .backup, threshold: 2, parties: 2, generation: 0, random: random)[0]
        let envelope = try CipherText.encrypt(
            record, method: .passkey, secret: .keyMaterial(random.secureBytes(count: 32)), using: random)
        #expect(try CipherText(base64: envelope.base64) == envelope)
        #expect(throws: ShareRecoveryError(.malformedCipherText, "")) { try CipherText(base64: envelope.base64 + "\n") }
        #expect(throws: ShareRecoveryError(.malformedCipherText, "")) { try CipherText(base64: " " + envelope.base64) }
    }

    // MARK: StrictJSON

    static func rejects(_ text: String) -> Bool {
        (try? StrictJSON.parse(text)) == nil
    }

    @Test func jsonRejectsDuplicateKeys() {
        #expect(Self.rejects(#"{"a": 1, "a": 1}"#))
        #expect(Self.rejects(#"{"a": {"b": 1, "b": 2}}"#))
        // Keys are compared after unescaping.
        #expect(Self.rejects(#"{"a": 1, "\u0061": 2}"#))
        #expect(!Self.rejects(#"{"a": {"a": 1}}"#))
    }

    @Test(arguments: [#"{} x"#, #"{}{}"#, #"1 2"#, #"[] ,"#, "\"a\"\u{0}", #"{}}"#])
    func jsonRejectsTrailingBytes(text: String) {
        #expect(Self.rejects(text))
    }

    @Test func jsonAllowsSurroundingWhitespace() throws {
        #expect(try StrictJSON.parse(" \t\r\n{}\n") == .object([]))
    }

    @Test(arguments: [#""\ud800""#, #""\udc00""#, #""\ud800\u0041""#, #""\ud800x""#, #""\udbff\ud800""#, #""\ud83d""#])
    func jsonRejectsLoneSurrogates(text: String) {
        #expect(Self.rejects(text))
    }

    @Test func jsonDecodesSurrogatePairs() throws {
        #expect(try StrictJSON.parse(#""\ud83d\udd11 \u00e9""#) == .string("\u{1F511} \u{E9}"))
    }

    @Test func jsonRejectsInvalidUTF8AndControlCharacters() {
        #expect((try? StrictJSON.parse([0x22, 0xFF, 0x22])) == nil)
        #expect((try? StrictJSON.parse([0x22, 0xC3, 0x22])) == nil)
        #expect((try? StrictJSON.parse([0x22, 0xED, 0xA0, 0x80, 0x22])) == nil)  // an encoded surrogate
        #expect(Self.rejects("\"a\nb\""))
        #expect(Self.rejects("\"a\u{1F}b\""))
        #expect(Self.rejects(#""\x41""#))
    }

    @Test func jsonDepthIsLimited() {
        // The root is at depth 0, so maximumDepth + 1 nested arrays is the deepest accepted document.
        let deepest = StrictJSON.maximumDepth + 1
        #expect(!Self.rejects(String(repeating: "[", count: deepest) + String(repeating: "]", count: deepest)))
        #expect(Self.rejects(String(repeating: "[", count: deepest + 1) + String(repeating: "]", count: deepest + 1)))
        #expect(
            Self.rejects(
                String(repeating: #"{"a":"#, count: deepest + 1) + "1" + String(repeating: "}", count: deepest + 1)))
        #expect(Self.rejects(String(repeating: "[", count: 100_000)))
    }

    @Test func jsonSizeIsLimited() throws {
        let text = "[" + String(repeating: "0,", count: 50) + "0]"
        #expect(try StrictJSON.parse(text, maximumSize: text.utf8.count) != .null)
        #expect((try? StrictJSON.parse(text, maximumSize: text.utf8.count - 1)) == nil)
    }

    @Test func jsonNumbersKeepTheirText() throws {
        #expect(
            try StrictJSON.parse("[2, 2.0, 2e0, -0, 10]")
                == .array([.number("2"), .number("2.0"), .number("2e0"), .number("-0"), .number("10")]))
        for text in ["01", "+1", ".5", "1.", "1e", "-", "0x10", "NaN", "Infinity", "1_000"] {
            #expect(Self.rejects("[\(text)]"), "\(text)")
        }
    }

    @Test func jsonRejectsLenientLiterals() {
        for text in ["[True]", "[nul]", "[undefined]", "{'a': 1}", "{a: 1}", "[1,]", "{\"a\": 1,}", "[,1]", ""] {
            #expect(Self.rejects(text), "\(text)")
        }
    }

    // MARK: JSONWriter

    static let sample: JSONValue = .object([
        ("b", .array([.number("1"), .bool(true), .null])),
        ("a", .string("caf\u{E9} \u{1F511} \"q\" \\ \n\u{1}")),
        ("empty", .object([])),
        ("none", .array([])),
    ])

    @Test func compactOutputIsStable() {
        #expect(
            JSONWriter.write(Self.sample)
                == "{\"b\":[1,true,null],\"a\":\"caf\u{E9} \u{1F511} \\\"q\\\" \\\\ \\n\\u0001\",\"empty\":{},\"none\":[]}"
        )
    }

    @Test func indentedOutputIsStable() {
        let expected = """
            {
              "b": [
                1,
                true,
                null
              ],
              "a": "caf\\u00e9 \\ud83d\\udd11 \\"q\\" \\\\ \\n\\u0001",
              "empty": {},
              "none": []
            }
            """
        #expect(JSONWriter.writeIndented(Self.sample, indent: 2, asciiOnly: true) == expected)
        #expect(JSONWriter.writeIndented(Self.sample, asciiOnly: false).contains("caf\u{E9} \u{1F511}"))
    }

    /// Each ASCII character on the boundary of the unescaped fast path: printable ones and DEL but the
    /// quote and the backslash go out as they are, the rest escaped (DEL too when ASCII-only), and every
    /// one reads back.
    @Test func asciiCharactersEscapeExactlyWhenNeeded() throws {
        for value in UInt8(0)...UInt8(0x7F) {
            let text = "ab" + String(UnicodeScalar(value)) + "cd"
            let plain = (0x20...0x7F).contains(value) && value != UInt8(ascii: "\"") && value != UInt8(ascii: "\\")
            let compact = JSONWriter.write(.string(text))
            #expect((compact == "\"" + text + "\"") == plain, "byte \(value)")
            let ascii = JSONWriter.writeIndented(.string(text), asciiOnly: true)
            #expect(ascii.contains("\\u007f") == (value == 0x7F), "byte \(value)")
            #expect(try StrictJSON.parse(compact) == .string(text), "byte \(value)")
            #expect(try StrictJSON.parse(ascii) == .string(text), "byte \(value)")
        }
    }

    @Test func everyFormRoundTrips() throws {
        for text in [
            JSONWriter.write(Self.sample), JSONWriter.writeIndented(Self.sample),
            JSONWriter.writeIndented(Self.sample, indent: 4, asciiOnly: true),
        ] {
            #expect(try StrictJSON.parse(text) == Self.sample)
        }
    }

    // MARK: Timestamps (§6 createdAt)

    @Test(arguments: [
        "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.123456789Z", "1970-01-01T00:00:00Z",
        "2026-12-31T23:59:60Z", "2028-02-29T12:00:00Z", "2000-02-29T00:00:00Z", "2026-04-30T23:59:59Z",
        "9999-12-31T23:59:59Z",
    ])
    func timestampsAccepted(text: String) {
        #expect(Timestamp.isValid(text))
    }

    @Test(arguments: [
        "", "Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00z", "2026-01-01t00:00:00Z", "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00,5Z", "2026-01-01T00:00:00.5xZ",
        "2026-01-01T00:00Z", "2026-1-01T00:00:00Z", "26-01-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-01-00T00:00:00Z", "2026-01-32T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:61Z", "2026-01-01T00:00:00ZZ",
        "\u{FF12}026-01-01T00:00:00Z", "2026-01-01T00:00:00.\u{0665}Z",
    ])
    func timestampsRejected(text: String) {
        #expect(!Timestamp.isValid(text))
    }

    @Test func nowIsAValidTimestamp() {
        #expect(Timestamp.isValid(Timestamp.now()))
    }
}
