import ShareCrypto
import TestSupport
import Testing

/// `bip-0032/test-vectors.json`: the ext pub of every chain of test vectors 1-4, and test vector 5's invalid keys.
private struct BIP32File: Decodable, Sendable {
    struct Chain: Decodable, Sendable {
        struct Step: Decodable, Sendable {
            let chain: String
            let xpub: String
        }
        let vector: Int
        let steps: [Step]
    }
    struct Invalid: Decodable, Sendable {
        let key: String
        let reason: String
    }
    let chains: [Chain]
    let invalid: [Invalid]
}

/// `bip-0328/vectors.json`.
private struct BIP328File: Decodable, Sendable {
    struct Case: Decodable, Sendable {
        let aggregate_pubkey: HexBytes
        let xpub: String
    }
    let cases: [Case]
}

@Suite("BIP-32 extended public keys and BIP-328 synthetic xpubs")
struct ExtendedPublicKeyVectorTests {
    /// `m/0H/1/2H` → its last index (`1`, or 2^31 + 2 for `2H`).
    private static func lastIndex(of chain: String) throws -> UInt32 {
        let step = try #require(chain.split(separator: "/").last)
        if step.hasSuffix("H") { return try #require(UInt32(step.dropLast())) + ExtendedPublicKey.hardenedOffset }
        return try #require(UInt32(step))
    }

    @Test(
        "every non-hardened step of test vectors 1 and 2, derived from the parent's xpub alone, gives the published child xpub"
    )
    func publicDerivation() throws {
        let file = try VectorFile.load("bip-0032/test-vectors.json", as: BIP32File.self)
        var derived = 0
        for chain in file.chains {
            for (parent, child) in zip(chain.steps, chain.steps.dropFirst()) {
                let index = try Self.lastIndex(of: child.chain)
                let parentKey = try ExtendedPublicKey(serialized: parent.xpub)
                guard index < ExtendedPublicKey.hardenedOffset else {
                    // A hardened child needs the parent's private key: refused from the xpub.
                    let error = #expect(throws: ShareCryptoError.self) { _ = try parentKey.child(at: index) }
                    #expect(error?.code == .invalidParameters, "\(child.chain)")
                    continue
                }
                let (key, tweak) = try parentKey.child(at: index)
                #expect(key.serialized == child.xpub, "vector \(chain.vector) \(child.chain)")
                #expect(key.depth == parentKey.depth + 1 && key.childNumber == index)
                #expect(key.parentFingerprint == (try parentKey.fingerprint()))
                // The child key is the parent plus I_L·G: the tweak a FROST signer adds.
                #expect(key.publicKey == (try parentKey.publicKey + Point(generatorTimes: tweak)))
                derived += 1
            }
        }
        // Vector 1: m/0H → 1, m/0H/1/2H → 2, → 1000000000; vector 2: m → 0, …/2147483647H → 1, …/2147483646H → 2.
        #expect(derived == 6)
    }

    @Test("two steps at once: m/0H/1/2H/2/1000000000 from m/0H/1/2H's xpub")
    func twoSteps() throws {
        let file = try VectorFile.load("bip-0032/test-vectors.json", as: BIP32File.self)
        let steps = try #require(file.chains.first { $0.vector == 1 }).steps
        let parent = try #require(steps.first { $0.chain == "m/0H/1/2H" })
        let expected = try #require(steps.first { $0.chain == "m/0H/1/2H/2/1000000000" })
        let key = try ExtendedPublicKey(serialized: parent.xpub).child(at: 2).key.child(at: 1_000_000_000).key
        #expect(key.serialized == expected.xpub)
    }

    @Test("every published xpub of vectors 1-4 parses and serialises back to the same string (leading zeros kept)")
    func roundTrip() throws {
        let file = try VectorFile.load("bip-0032/test-vectors.json", as: BIP32File.self)
        let xpubs = file.chains.flatMap { $0.steps.map(\.xpub) }
        #expect(xpubs.count == 17)
        for xpub in xpubs {
            let key = try ExtendedPublicKey(serialized: xpub)
            #expect(key.serialized == xpub)
            #expect(key.rawRepresentation.count == 78)
        }
    }

    @Test("test vector 5: every invalid key is refused, for its stated reason")
    func invalidKeys() throws {
        let file = try VectorFile.load("bip-0032/test-vectors.json", as: BIP32File.self)
        #expect(file.invalid.count == 16)
        for test in file.invalid {
            let error = #expect(throws: ShareCryptoError.self, "\(test.reason)") {
                _ = try ExtendedPublicKey(serialized: test.key)
            }
            // Private keys (xprv…) and unknown versions are refused by version; an xpub whose key
            // bytes are not a point by the point check; the rest by the checks their reason names.
            let expected: ShareCryptoError.Code =
                if test.key.hasPrefix("xpub"), test.reason.contains("pubkey") || test.reason.contains("prvkey mismatch")
                {
                    .invalidPoint
                } else {
                    .invalidEncoding
                }
            #expect(error?.code == expected, "\(test.reason): \(error?.description ?? "accepted")")
        }
    }

    @Test("Base58Check refuses a character outside the alphabet and a changed character")
    func base58CheckRefusals() throws {
        let xpub =
            "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) {
            _ = try Base58Check.decode(String(xpub.map { $0 == "x" ? "0" : $0 }))
        }
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) {
            _ = try Base58Check.decode(String(xpub.dropLast()) + "9")
        }
        #expect(throws: ShareCryptoError(.invalidEncoding, "")) { _ = try Base58Check.decode("111") }
        // Leading zero bytes are leading 1s, both ways.
        let payload: [UInt8] = [0, 0, 1, 2, 3]
        let encoded = Base58Check.encode(payload)
        #expect(encoded.hasPrefix("11") && !encoded.hasPrefix("111"))
        #expect(try Base58Check.decode(encoded) == payload)
    }

    @Test(
        "BIP-328: the chain code is SHA-256(\"MuSig2MuSig2MuSig2\") and each aggregate key's synthetic xpub is the published one"
    )
    func bip328() throws {
        #expect(ExtendedPublicKey.aggregateKeyChainCode == SHA256.hash(Array("MuSig2MuSig2MuSig2".utf8)))
        let file = try VectorFile.load("bip-0328/vectors.json", as: BIP328File.self)
        #expect(file.cases.count == 3)
        for test in file.cases {
            let key = try ExtendedPublicKey(
                aggregateKey: Point(rawRepresentation: test.aggregate_pubkey.bytes, curve: .secp256k1))
            #expect(key.serialized == test.xpub)
            let parsed = try ExtendedPublicKey(serialized: test.xpub)
            #expect(parsed == key)
            #expect(parsed.depth == 0 && parsed.parentFingerprint == [0, 0, 0, 0] && parsed.childNumber == 0)
        }
    }
}
