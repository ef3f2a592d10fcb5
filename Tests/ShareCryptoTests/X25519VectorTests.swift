import ShareCrypto
import TestSupport
import Testing

/// `wycheproof/testvectors_v1/x25519_test.json` (XdhComp).
private struct XdhGroup: Decodable, Sendable {
    let curve: String
    let tests: [XdhCase]
}

private struct XdhCase: Decodable, Sendable {
    let tcId: Int
    let comment: String
    let `public`: HexBytes
    let `private`: HexBytes
    let shared: HexBytes
    let result: WycheproofResult
    let flags: [String]
}

@Suite("X25519 vectors")
struct X25519VectorTests {
    static let random = DeterministicRandom(seed: Array("x25519 vectors".utf8))

    @Test("Wycheproof x25519_test.json, every case")
    func wycheproof() throws {
        let file = try VectorFile.load("wycheproof/testvectors_v1/x25519_test.json", as: WycheproofFile<XdhGroup>.self)
        var count = 0
        var rejected = 0
        var sealRefused = 0
        for group in file.testGroups {
            #expect(group.curve == "curve25519")
            for test in group.tests {
                count += 1
                let context = Comment(rawValue: "tcId \(test.tcId): \(test.comment) \(test.flags)")
                // libsodium refuses an all-zero result (a low-order public key), which Wycheproof flags as such.
                let sharedIsZero = test.shared.bytes.allSatisfy { $0 == 0 }
                #expect(sharedIsZero == test.flags.contains("ZeroSharedSecret"), context)
                if sharedIsZero {
                    rejected += 1
                    #expect(throws: ShareCryptoError(.invalidKey, ""), context) {
                        try X25519.sharedSecret(secretKey: test.private.secure, publicKey: test.public.bytes)
                    }
                    // A low-order key gives every (clamped) ephemeral key a zero secret, so nothing can be sealed to it.
                    if test.flags.contains("LowOrderPublic") {
                        sealRefused += 1
                        #expect(throws: ShareCryptoError(.invalidKey, ""), context) {
                            try SealedBox.seal(SecureBytes(zeros: 1), to: test.public.bytes, using: Self.random)
                        }
                    }
                } else {
                    #expect(test.result != .invalid, context)
                    let shared = try X25519.sharedSecret(secretKey: test.private.secure, publicKey: test.public.bytes)
                    #expect(shared.revealedBytes() == test.shared.bytes, context)
                }
            }
        }
        #expect(count == file.numberOfTests)
        print(
            "wycheproof x25519_test.json: \(rejected) zero shared secrets rejected (\(sealRefused) also refused as sealing keys), \(count - rejected) matched"
        )
        VectorFile.report("wycheproof x25519_test.json", cases: count)
    }
}
