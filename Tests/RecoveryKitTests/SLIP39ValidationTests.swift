import Foundation
@testable import RecoveryKit
import ShareCrypto
import Testing

/// A generation request that must be refused, and the code it must be refused with.
struct BadRequest: Sendable, CustomTestStringConvertible {
    let name: String
    let secretCount: Int
    let groupThreshold: Int
    let groups: [(Int, Int)]
    let passphrase: [UInt8]
    let iterationExponent: Int
    let code: RecoveryKitError.Code

    init(
        _ name: String, secretCount: Int = 16, groupThreshold: Int = 1, groups: [(Int, Int)] = [(2, 3)],
        passphrase: [UInt8] = [], iterationExponent: Int = 0, _ code: RecoveryKitError.Code
    ) {
        self.name = name
        self.secretCount = secretCount
        self.groupThreshold = groupThreshold
        self.groups = groups
        self.passphrase = passphrase
        self.iterationExponent = iterationExponent
        self.code = code
    }

    var testDescription: String { name }

    static let all: [BadRequest] = [
        BadRequest("15-byte secret", secretCount: 15, .invalidSecretLength),
        BadRequest("17-byte secret", secretCount: 17, .invalidSecretLength),
        BadRequest("empty secret", secretCount: 0, .invalidSecretLength),
        BadRequest("1026-byte secret, over the maximum", secretCount: 1026, .invalidSecretLength),
        BadRequest("passphrase with a newline", passphrase: Array("pass\nword".utf8), .invalidPassphrase),
        BadRequest("passphrase with UTF-8", passphrase: Array("päss".utf8), .invalidPassphrase),
        BadRequest("iteration exponent 16", iterationExponent: 16, .invalidIterationExponent),
        BadRequest("iteration exponent -1", iterationExponent: -1, .invalidIterationExponent),
        BadRequest("no groups", groups: [], .invalidGroupCount),
        BadRequest("17 groups", groups: Array(repeating: (1, 1), count: 17), .invalidGroupCount),
        BadRequest("group threshold above group count", groupThreshold: 2, .invalidGroupThreshold),
        BadRequest("group threshold 0", groupThreshold: 0, .invalidGroupThreshold),
        BadRequest("17 members", groups: [(2, 17)], .invalidMemberCount),
        BadRequest("no members", groups: [(0, 0)], .invalidMemberCount),
        BadRequest("member threshold above member count", groups: [(4, 3)], .invalidMemberThreshold),
        BadRequest("member threshold 0", groups: [(0, 3)], .invalidMemberThreshold),
        BadRequest("1-of-2 group", groups: [(1, 2)], .multipleMembersWithThresholdOne),
    ]
}

@Suite("SLIP-39 validation and building blocks")
struct SLIP39ValidationTests {
    static func share(seed: String = "validation", secret: SecureBytes? = nil) throws -> SLIP39.Share {
        let random = DeterministicRandom(seed: Array(seed.utf8))
        return try SLIP39.generateShares(
            masterSecret: secret ?? DeterministicRandom(seed: Array("secret".utf8)).secureBytes(count: 16),
            groupThreshold: 1,
            groups: [SLIP39.Group(memberThreshold: 2, memberCount: 3)], iterationExponent: 0, using: random)[0][1]
    }

    @Test(arguments: BadRequest.all)
    func refusedGenerationRequests(_ request: BadRequest) {
        #expect(throws: RecoveryKitError(request.code, "")) {
            try SLIP39.generateShares(
                masterSecret: SecureBytes(zeros: request.secretCount), groupThreshold: request.groupThreshold,
                groups: request.groups.map { SLIP39.Group(memberThreshold: $0.0, memberCount: $0.1) },
                passphrase: SecureBytes(copying: request.passphrase), iterationExponent: request.iterationExponent,
                using: DeterministicRandom(seed: Array("refused".utf8)))
        }
    }

    @Test("The largest layout, 16 groups of 16, and a 64-byte secret")
    func largestLayout() throws {
        let random = DeterministicRandom(seed: Array("largest".utf8))
        let secret = random.secureBytes(count: 64)
        let kit = try SLIP39.generateShares(
            masterSecret: secret, groupThreshold: 16,
            groups: Array(repeating: SLIP39.Group(memberThreshold: 16, memberCount: 16), count: 16),
            iterationExponent: 0, using: random)
        #expect(kit.allSatisfy { $0.count == 16 })
        #expect(kit[15][15].groupIndex == 15 && kit[15][15].memberIndex == 15)
        #expect(try SLIP39.combine(kit.flatMap { $0 }) == secret)
    }

    @Test("The longest secret, 1024 bytes, gives 827-word mnemonics that read back")
    func longestSecret() throws {
        let random = DeterministicRandom(seed: Array("longest".utf8))
        let secret = random.secureBytes(count: SLIP39.maximumSecretCount)
        let kit = try SLIP39.generateShares(
            masterSecret: secret, groupThreshold: 1, groups: [SLIP39.Group(memberThreshold: 2, memberCount: 2)],
            iterationExponent: 0, using: random)
        let shares = try kit[0].map { try SLIP39.Share(mnemonic: $0.mnemonic) }
        #expect(shares.map(\.wordCount) == [827, 827])
        #expect(shares.map { $0.revealedMnemonic().split(separator: " ").count } == [827, 827])
        #expect(try SLIP39.combine(shares) == secret)
    }

    @Test("An oversize mnemonic is refused by its word count before any word is looked up")
    func oversizeMnemonics() throws {
        // 827 unknown words reach the word lookup; one more is refused by count alone.
        let unknown = { (count: Int) in Array(repeating: "notaword", count: count).joined(separator: " ") }
        #expect(throws: RecoveryKitError(.invalidWord, "")) { try SLIP39.Share(mnemonic: unknown(827)) }
        let error = try #require(throws: RecoveryKitError.self) { try SLIP39.Share(mnemonic: unknown(828)) }
        #expect(error.code == .invalidMnemonicLength)
        #expect(error.reason.contains("827"))

        // Valid words repeated past the bound, as one mnemonic and as a line of a kit file (4 MiB).
        let words = try Self.share().revealedMnemonic()
        let long = String(repeating: words + " ", count: 4 * 1024 * 1024 / (words.utf8.count + 1))
        #expect(throws: RecoveryKitError(.invalidMnemonicLength, "")) { try SLIP39.Share(mnemonic: long) }
        let lineError = try #require(throws: RecoveryKitError.self) {
            try SLIP39.decodeMnemonics(lines: SecureBytes(utf8: words + "\n" + long + "\n"))
        }
        #expect(lineError.code == .invalidMnemonicLength)
        #expect(lineError.reason.hasPrefix("line 2:"))
    }

    @Test("Words: unknown, any case, any whitespace")
    func wordParsing() throws {
        let share = try Self.share()
        let words = share.revealedMnemonic().split(separator: " ").map(String.init)

        var unknown = words
        unknown[5] = "notaword"
        let error = try #require(throws: RecoveryKitError.self) {
            try SLIP39.Share(mnemonic: unknown.joined(separator: " "))
        }
        #expect(error.code == .invalidWord)
        #expect(error.reason.contains("word 6"))
        #expect(!error.reason.contains("notaword"))

        let shouted = try SLIP39.Share(mnemonic: words.joined(separator: " ").uppercased())
        #expect(shouted.value == share.value)
        let spaced = try SLIP39.Share(mnemonic: "  " + words.joined(separator: "\t \n") + "\r\n")
        #expect(spaced.value == share.value)
        // A 4-letter prefix is not a word: corrections are left to the user (SLIP-0039 §Checksum design).
        var prefixed = words
        prefixed[5] = String(words[5].prefix(4))
        if prefixed[5] != words[5] {
            #expect(throws: RecoveryKitError(.invalidWord, "")) {
                try SLIP39.Share(mnemonic: prefixed.joined(separator: " "))
            }
        }
    }

    @Test("Any single changed word breaks the checksum")
    func singleWordErrors() throws {
        let words = try Self.share().revealedMnemonic().split(separator: " ").map(String.init)
        for position in words.indices {
            let index = try #require(Wordlist.words.firstIndex(of: words[position]))
            var changed = words
            changed[position] = Wordlist.words[(index + 1 + position) % 1024]
            #expect(throws: RecoveryKitError(.invalidChecksum, "")) {
                try SLIP39.Share(mnemonic: changed.joined(separator: " "))
            }
        }
    }

    @Test("Descriptions and errors never show the share value or its words")
    func redaction() throws {
        // One random seed, two secrets: the same metadata, different values, so equal descriptions
        // show that only metadata is described.
        let first = try Self.share(seed: "redaction", secret: SecureBytes(zeros: 16))
        let second = try Self.share(
            seed: "redaction", secret: SecureBytes(copying: Array(repeating: UInt8(7), count: 16)))
        try #require(first.value != second.value)
        #expect(first.description == second.description)
        #expect(first.debugDescription == second.debugDescription)
        #expect(String(reflecting: first) == String(reflecting: second))

        let words = first.revealedMnemonic().split(separator: " ").map(String.init)
        let valueWords = Array(words[4..<words.count - 3])
        let valuePairs = zip(valueWords, valueWords.dropFirst()).map { "\($0) \($1)" }
        for text in [first.description, "\(first)", "\(first.mnemonic)", "\(first.value)"] {
            #expect(!text.contains(Hex.encode(first.value.revealedBytes())))
            #expect(valuePairs.allSatisfy { !text.contains($0) }, "\(text)")
            #expect(text.contains("redacted"))
        }

        // An unknown word, a broken checksum: reasons name positions, never words.
        var broken = words
        broken[10] = broken[10] == "academic" ? "acid" : "academic"
        let checksumError = try #require(throws: RecoveryKitError.self) {
            try SLIP39.Share(mnemonic: broken.joined(separator: " "))
        }
        #expect(checksumError.code == .invalidChecksum)
        #expect(valuePairs.allSatisfy { !checksumError.description.contains($0) })
        #expect(!checksumError.description.contains(broken[10]))
    }

    @Test("Line input names the failing line")
    func lineContext() throws {
        let good = try Self.share().revealedMnemonic()
        let error = try #require(throws: RecoveryKitError.self) {
            try SLIP39.decodeMnemonics(lines: SecureBytes(utf8: good + "\n\n" + good + " xyzzy\n"))
        }
        #expect(error.code == .invalidWord)
        #expect(error.reason.hasPrefix("line 3:"))
    }

    @Test("GF(256): the constant-time product agrees with the log/exp tables; inverses invert")
    func gf256() {
        #expect(GF256.exp.count == 255 && GF256.log.count == 256)
        #expect(Set(GF256.exp).count == 255 && !GF256.exp.contains(0))
        var wrongProducts = 0
        var wrongInverses = 0
        for a in 0...255 {
            for b in 0...255 {
                let expected: UInt8 =
                    a == 0 || b == 0 ? 0 : GF256.exp[(Int(GF256.log[a]) + Int(GF256.log[b])) % 255]
                if GF256.multiply(UInt8(a), UInt8(b)) != expected { wrongProducts += 1 }
            }
            if a != 0, GF256.multiply(UInt8(a), GF256.inverse(ofPublic: UInt8(a))) != 1 { wrongInverses += 1 }
        }
        #expect(wrongProducts == 0)
        #expect(wrongInverses == 0)
        // FIPS-197 §4.2: {57} • {83} = {c1}.
        #expect(GF256.multiply(0x57, 0x83) == 0xC1)
    }

    @Test("Shamir: the polynomial passes through the secret at 255 and the digest at 254")
    func shamir() throws {
        let random = DeterministicRandom(seed: Array("shamir".utf8))
        let secret = random.secureBytes(count: 16)
        let points = Shamir.split(threshold: 3, count: 5, secret: secret, using: random)
        #expect(points.map(\.x) == [0, 1, 2, 3, 4])
        for subset in combinations(of: points, size: 3) {
            #expect(Shamir.interpolate(subset, at: Shamir.secretIndex) == secret)
            #expect(try Shamir.recover(threshold: 3, points: subset, level: "test") == secret)
            // Every other point lies on the same polynomial.
            for point in points { #expect(Shamir.interpolate(subset, at: point.x) == point.y) }
        }
        // Two points of a degree-2 polynomial interpolate to another line: the digest catches it.
        #expect(throws: RecoveryKitError(.invalidDigest, "")) {
            try Shamir.recover(threshold: 2, points: Array(points.prefix(2)), level: "test")
        }
    }

    @Test("Feistel encryption: decrypt inverts encrypt; the identifier salts only when not extendable")
    func encryption() throws {
        let random = DeterministicRandom(seed: Array("feistel".utf8))
        let secret = random.secureBytes(count: 32)
        let passphrase = SecureBytes(utf8: "TREZOR")
        for extendable in [true, false] {
            let encrypted = try MasterSecretEncryption.encrypt(
                secret, passphrase: passphrase, iterationExponent: 0, identifier: 7945, extendable: extendable)
            #expect(encrypted != secret)
            #expect(
                try MasterSecretEncryption.decrypt(
                    encrypted, passphrase: passphrase, iterationExponent: 0, identifier: 7945, extendable: extendable)
                    == secret)
            let otherIdentifier = try MasterSecretEncryption.encrypt(
                secret, passphrase: passphrase, iterationExponent: 0, identifier: 7946, extendable: extendable)
            #expect((otherIdentifier == encrypted) == extendable)
            let otherExponent = try MasterSecretEncryption.encrypt(
                secret, passphrase: passphrase, iterationExponent: 1, identifier: 7945, extendable: extendable)
            #expect(otherExponent != encrypted)
        }
    }
}
