import Foundation
@testable import RecoveryKit
import ShareCrypto
import TestSupport
import Testing

@Suite("SLIP-39 official vectors")
struct SLIP39VectorTests {
    static let passphrase = SecureBytes(utf8: "TREZOR")

    /// The failure a vector's description names, read from its text: phrase (lowercased) → code.
    /// Descriptions that name no reason ("Basic sharing 2-of-3" with one share) expect any RecoveryKitError.
    static let failureReasons: [(phrase: String, code: RecoveryKitError.Code)] = [
        ("invalid checksum", .invalidChecksum),
        ("invalid padding", .invalidPadding),
        ("different identifiers", .mismatchedIdentifier),
        ("different iteration exponents", .mismatchedIterationExponent),
        ("mismatching group thresholds", .mismatchedGroupThreshold),
        ("mismatching group counts", .mismatchedGroupCount),
        ("greater group threshold than group counts", .invalidGroupThreshold),
        ("duplicate member indices", .duplicateMemberIndex),
        ("mismatching member thresholds", .mismatchedMemberThreshold),
        ("invalid digest", .invalidDigest),
        ("insufficient number of groups", .insufficientGroups),
        ("insufficient number of members", .insufficientMembers),
        ("insufficient length", .invalidMnemonicLength),
        ("invalid master secret length", .invalidSecretLength),
    ]

    static func expectedCode(for description: String) -> RecoveryKitError.Code? {
        let matches = failureReasons.filter { description.lowercased().contains($0.phrase) }
        #expect(matches.count <= 1, "ambiguous description: \(description)")
        return matches.first?.code
    }

    @Test("All 45 vectors: valid ones give the master secret, invalid ones the named error")
    func allVectors() throws {
        let vectors = try SLIP39Vector.all()
        #expect(vectors.count == 45)
        var valid = 0
        var invalid = 0
        var invalidWithNamedCode = 0
        for vector in vectors {
            let context = Comment(rawValue: vector.description)
            if vector.isValid {
                let shares = try vector.mnemonics.map { try SLIP39.Share(mnemonic: $0) }
                let secret = try SLIP39.combine(shares, passphrase: Self.passphrase)
                #expect(Hex.encode(secret.revealedBytes()) == vector.masterSecretHex, context)
                valid += 1
            } else if let code = Self.expectedCode(for: vector.description) {
                #expect(throws: RecoveryKitError(code, ""), context) {
                    try SLIP39.combine(
                        vector.mnemonics.map { try SLIP39.Share(mnemonic: $0) }, passphrase: Self.passphrase)
                }
                invalid += 1
                invalidWithNamedCode += 1
            } else {
                #expect(throws: RecoveryKitError.self, context) {
                    try SLIP39.combine(
                        vector.mnemonics.map { try SLIP39.Share(mnemonic: $0) }, passphrase: Self.passphrase)
                }
                invalid += 1
            }
        }
        print(
            "SLIP-39 official vectors: \(valid + invalid) run, \(valid) valid, \(invalid) invalid "
                + "(\(invalidWithNamedCode) with the specific code their description names)")
        #expect(valid == 15)
        #expect(invalid == 30)
        #expect(invalidWithNamedCode == 28)
    }

    @Test("Valid vectors also combine through mnemonic bytes and through one-per-line text")
    func secureBytesEntryPoints() throws {
        for vector in try SLIP39Vector.all() where vector.isValid {
            let fromBytes = try SLIP39.combine(
                mnemonics: vector.mnemonics.map { SecureBytes(utf8: $0) }, passphrase: Self.passphrase)
            #expect(
                Hex.encode(fromBytes.revealedBytes()) == vector.masterSecretHex, Comment(rawValue: vector.description))

            let text = SecureBytes(utf8: "\n" + vector.mnemonics.joined(separator: "\r\n  \n") + "\n")
            let shares = try SLIP39.decodeMnemonics(lines: text)
            #expect(shares.count == vector.mnemonics.count)
            let fromLines = try SLIP39.combine(shares, passphrase: Self.passphrase)
            #expect(fromLines == fromBytes)
        }
    }

    @Test("Every decodable vector mnemonic re-encodes to the same words")
    func reencoding() throws {
        var count = 0
        for vector in try SLIP39Vector.all() {
            for mnemonic in vector.mnemonics {
                guard let share = try? SLIP39.Share(mnemonic: mnemonic) else { continue }
                #expect(share.revealedMnemonic() == mnemonic, Comment(rawValue: vector.description))
                #expect(share.wordCount == mnemonic.split(separator: " ").count)
                count += 1
            }
        }
        print("SLIP-39 re-encoded vector mnemonics: \(count)")
        #expect(count > 60)
    }

    @Test("The embedded word list equals Tests/RecoveryKitTests/Vectors/slip39/wordlist.txt")
    func wordlist() throws {
        let file = try VectorFile.text("slip39/wordlist.txt").split(whereSeparator: \.isNewline).map(String.init)
        #expect(file.count == 1024)
        #expect(Wordlist.words == file)
        #expect(Wordlist.words == Wordlist.words.sorted())
        #expect(Set(Wordlist.words.map { $0.prefix(4) }).count == 1024)
        for (index, word) in Wordlist.words.enumerated() {
            let found = Array(word.uppercased().utf8).withUnsafeBytes { Wordlist.index(of: $0) }
            #expect(found == index)
        }
    }
}
