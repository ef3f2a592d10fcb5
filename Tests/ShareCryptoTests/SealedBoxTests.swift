import ShareCrypto
import TestSupport
import Testing

@Suite("Sealed boxes and secret bytes")
struct SealedBoxTests {
    private static let message = SecureBytes(copying: Array("SRSR share record bytes".utf8))

    @Test("a box sealed with an injected random source opens with crypto_box_seal_open", arguments: [0, 1, 23, 1000])
    func sealThenOpen(messageLength: Int) throws {
        let random = DeterministicRandom(seed: Array("sealed box \(messageLength)".utf8))
        let recipient = SealingKeyPair(using: random)
        let message = random.secureBytes(count: messageLength)
        let sealed = try SealedBox.seal(message, to: recipient.publicKey, using: random)
        #expect(sealed.count == messageLength + SealedBox.overhead)
        #expect(try SealedBox.open(sealed, with: recipient) == message)
        // A key pair restored from its secret key opens it too.
        let restored = try SealingKeyPair(secretKey: recipient.secretKey)
        #expect(restored.publicKey == recipient.publicKey)
        #expect(try SealedBox.open(sealed, with: restored) == message)
    }

    @Test("the system random source also produces boxes that open")
    func systemRandom() throws {
        let recipient = SealingKeyPair()
        let first = try SealedBox.seal(Self.message, to: recipient.publicKey)
        let second = try SealedBox.seal(Self.message, to: recipient.publicKey)
        #expect(first != second)
        #expect(try SealedBox.open(first, with: recipient) == Self.message)
        #expect(try SealedBox.open(second, with: recipient) == Self.message)
    }

    @Test("the same seed gives the same key pair and the same box; another seed does not")
    func deterministic() throws {
        func run(_ seed: String) throws -> (publicKey: [UInt8], sealed: [UInt8]) {
            let random = DeterministicRandom(seed: Array(seed.utf8))
            let recipient = SealingKeyPair(using: random)
            return (recipient.publicKey, try SealedBox.seal(Self.message, to: recipient.publicKey, using: random))
        }
        let a = try run("seed A")
        let b = try run("seed A")
        let c = try run("seed B")
        #expect(a.publicKey == b.publicKey)
        #expect(a.sealed == b.sealed)
        #expect(a.publicKey != c.publicKey)
        #expect(a.sealed != c.sealed)

        // The sealed box's ephemeral key comes from the stream too, so it differs from box to box.
        let random = DeterministicRandom(seed: Array("seed A".utf8))
        let recipient = SealingKeyPair(using: random)
        let first = try SealedBox.seal(Self.message, to: recipient.publicKey, using: random)
        let second = try SealedBox.seal(Self.message, to: recipient.publicKey, using: random)
        #expect(first == a.sealed)
        #expect(Array(first.prefix(32)) != Array(second.prefix(32)))
    }

    @Test("SecureBytes never shows its bytes", arguments: [1, 16, 32, 64])
    func redactedDescription(count: Int) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &* 37) }
        let secret = SecureBytes(copying: bytes)
        let hex = HexBytes(bytes).description
        let renderings = [
            secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret), "\([secret])",
        ]
        for text in renderings {
            #expect(!text.contains(hex), "\(text)")
            #expect(text.contains("redacted"), "\(text)")
        }
        // Scalars print redacted as well.
        let scalar = Scalar.random(on: .ed25519, using: DeterministicRandom(seed: bytes))
        #expect(!"\(scalar)".contains(HexBytes(scalar.rawRepresentation.revealedBytes()).description))
    }

    @Test("SecureBytes equality")
    func equality() throws {
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(SecureBytes(copying: bytes) == SecureBytes(copying: bytes))
        #expect(SecureBytes(copying: bytes) != SecureBytes(copying: bytes.reversed()))
        #expect(SecureBytes(copying: bytes) != SecureBytes(copying: bytes.dropLast()))
        var lastBitFlipped = bytes
        lastBitFlipped[7] ^= 1
        #expect(SecureBytes(copying: bytes) != SecureBytes(copying: lastBitFlipped))
        #expect(SecureBytes(zeros: 0) == SecureBytes(copying: [UInt8]()))
        #expect(SecureBytes(zeros: 4) == SecureBytes(copying: [UInt8](repeating: 0, count: 4)))
        let concatenated = SecureBytes.concatenating([
            SecureBytes(copying: bytes.prefix(3)), SecureBytes(copying: bytes.dropFirst(3)),
        ])
        #expect(concatenated == SecureBytes(copying: bytes))
        #expect(try concatenated.slice(2..<5) == SecureBytes(copying: bytes[2..<5]))
        #expect(throws: ShareCryptoError(.invalidLength, "")) { try concatenated.slice(4..<9) }
        #expect(constantTimeEquals(bytes, bytes))
        #expect(!constantTimeEquals(bytes, lastBitFlipped))
        #expect(!constantTimeEquals(bytes, bytes.dropLast()))
    }
}
