import ShareCrypto
import TestSupport
import Testing

/// `wycheproof/testvectors_v1/xchacha20_poly1305_test.json` (AeadTest).
private struct AeadGroup: Decodable, Sendable {
    let ivSize: Int
    let keySize: Int
    let tagSize: Int
    let tests: [AeadCase]
}

private struct AeadCase: Decodable, Sendable {
    let tcId: Int
    let comment: String
    let key: HexBytes
    let iv: HexBytes
    let aad: HexBytes
    let msg: HexBytes
    let ct: HexBytes
    let tag: HexBytes
    let result: WycheproofResult
    let flags: [String]
}

/// `rfc-kats/xchacha_draft03.json`: one section per primitive of draft-irtf-cfrg-xchacha-03.
private struct XChaChaDraftFile: Decodable, Sendable {
    struct HChaCha20: Decodable, Sendable {
        let key: HexBytes
        let nonce: HexBytes
        let subkey: HexBytes
    }
    struct Aead: Decodable, Sendable {
        let plaintext: HexBytes
        let aad: HexBytes
        let key: HexBytes
        let nonce: HexBytes
        let ciphertext: HexBytes
        let tag: HexBytes
    }
    struct Stream: Decodable, Sendable {
        let counter: Int
        let plaintext: HexBytes
        let key: HexBytes
        let nonce: HexBytes
        let keystream: HexBytes
    }
    let hchacha20: HChaCha20?
    let aead_xchacha20_poly1305: Aead?
    let xchacha20_stream_counter0: Stream?
}

@Suite("XChaCha20-Poly1305 vectors")
struct XChaCha20Poly1305VectorTests {
    @Test("Wycheproof xchacha20_poly1305_test.json, every case")
    func wycheproof() throws {
        let file = try VectorFile.load(
            "wycheproof/testvectors_v1/xchacha20_poly1305_test.json", as: WycheproofFile<AeadGroup>.self)
        var count = 0
        for group in file.testGroups {
            for test in group.tests {
                count += 1
                let context = Comment(rawValue: "tcId \(test.tcId): \(test.comment) \(test.flags)")
                let sealed = test.ct.bytes + test.tag.bytes
                let nonceIsValid = test.iv.count == XChaCha20Poly1305.nonceCount
                switch test.result {
                case .valid, .acceptable:
                    let out = try XChaCha20Poly1305.seal(
                        test.msg.secure, key: test.key.secure, nonce: test.iv.bytes, aad: test.aad.bytes)
                    #expect(out == sealed, context)
                    let opened = try XChaCha20Poly1305.open(
                        sealed, key: test.key.secure, nonce: test.iv.bytes, aad: test.aad.bytes)
                    #expect(opened.revealedBytes() == test.msg.bytes, context)
                case .invalid:
                    // A nonce of the wrong size is a malformed input; anything else must fail the tag check.
                    let expected = ShareCryptoError(nonceIsValid ? .authenticationFailed : .invalidLength, "")
                    #expect(throws: expected, context) {
                        try XChaCha20Poly1305.open(
                            sealed, key: test.key.secure, nonce: test.iv.bytes, aad: test.aad.bytes)
                    }
                    if !nonceIsValid {
                        #expect(throws: expected, context) {
                            try XChaCha20Poly1305.seal(
                                test.msg.secure, key: test.key.secure, nonce: test.iv.bytes, aad: test.aad.bytes)
                        }
                    }
                }
            }
        }
        #expect(count == file.numberOfTests)
        VectorFile.report("wycheproof xchacha20_poly1305_test.json", cases: count)
    }

    @Test("draft-irtf-cfrg-xchacha-03 AEAD known answer (HChaCha20 and raw keystream sections have no API here)")
    func draft03() throws {
        let file = try VectorFile.load("rfc-kats/xchacha_draft03.json", as: XChaChaDraftFile.self)
        var count = 0
        if let aead = file.aead_xchacha20_poly1305 {
            count += 1
            let sealed = aead.ciphertext.bytes + aead.tag.bytes
            #expect(
                try XChaCha20Poly1305.seal(
                    aead.plaintext.secure, key: aead.key.secure, nonce: aead.nonce.bytes, aad: aead.aad.bytes) == sealed
            )
            let opened = try XChaCha20Poly1305.open(
                sealed, key: aead.key.secure, nonce: aead.nonce.bytes, aad: aead.aad.bytes)
            #expect(opened.revealedBytes() == aead.plaintext.bytes)
            // The same known answer with one tag bit flipped must not open.
            var tampered = sealed
            tampered[tampered.count - 1] ^= 0x01
            #expect(throws: ShareCryptoError(.authenticationFailed, "")) {
                try XChaCha20Poly1305.open(tampered, key: aead.key.secure, nonce: aead.nonce.bytes, aad: aead.aad.bytes)
            }
        }
        let skipped = [file.hchacha20 != nil, file.xchacha20_stream_counter0 != nil].filter { $0 }.count
        print("rfc-kats xchacha_draft03.json: skipped \(skipped) sections without an API (HChaCha20, raw keystream)")
        VectorFile.report("rfc-kats xchacha_draft03.json (AEAD)", cases: count)
    }
}
