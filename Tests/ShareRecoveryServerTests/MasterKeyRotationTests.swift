import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// Several master keys (docs/server.md, "Rotating the master key"): a sealed value names its key by key
/// id, the first key seals and every one opens.
@Suite("Master key rotation")
struct MasterKeyRotationTests {
    static func derived(_ key: SecureBytes) throws -> DerivedKeys { try DerivedKeys(masterKey: key) }

    /// A value sealed as servers did before key ids: nonce || ciphertext || tag, no header.
    static func legacySeal(_ plaintext: SecureBytes, keys: DerivedKeys, table: String, row: [String]) throws
        -> [UInt8]
    {
        let nonce = SystemRandom().bytes(count: XChaCha20Poly1305.nonceCount)
        return nonce
            + (try XChaCha20Poly1305.seal(
                plaintext, key: keys.atRest, nonce: nonce, aad: AtRestSealer.aad(table: table, row: row, header: [])))
    }

    @Test("a sealed value carries its key id; any key of the file opens it; a legacy value still opens")
    func layouts() throws {
        let old = try Self.derived(SystemRandom().secureBytes(count: 32))
        let new = try Self.derived(SystemRandom().secureBytes(count: 32))
        let secret = SecureBytes(copying: Array("a signing share".utf8))
        let row = ["client", "2", "set"]
        let sealed = try AtRestSealer(keys: [old]).seal(secret, table: "signing_shares", row: row)
        #expect(sealed[0] == AtRestSealer.version && Array(sealed[1..<5]) == old.keyId)

        let both = AtRestSealer(keys: [new, old])
        let opened = try both.opening(sealed, table: "signing_shares", row: row)
        #expect(opened.plaintext == secret && opened.layout == .keyed(index: 1))
        #expect(
            try AtRestSealer(keys: [old, new]).opening(sealed, table: "signing_shares", row: row).layout
                == .keyed(index: 0))

        let legacy = try Self.legacySeal(secret, keys: old, table: "signing_shares", row: row)
        let legacyOpened = try both.opening(legacy, table: "signing_shares", row: row)
        #expect(legacyOpened.plaintext == secret && legacyOpened.layout == .legacy(index: 1))

        // The header is bound: the same value under the other key's id does not open.
        var swapped = sealed
        swapped.replaceSubrange(1..<5, with: new.keyId)
        #expect(throws: ShareRecoveryError.self) { try both.open(swapped, table: "signing_shares", row: row) }
        // Nor under another row.
        #expect(throws: ShareRecoveryError.self) {
            try both.open(sealed, table: "signing_shares", row: ["client", "3", "set"])
        }

        // A file without the key: the error names the table and the key id, never a key.
        do {
            _ = try AtRestSealer(keys: [new]).open(sealed, table: "signing_shares", row: row)
            Issue.record("a value opened without its key")
        } catch {
            #expect(error.code == .storeCorrupted)
            #expect(error.reason.contains("signing_shares") && error.reason.contains(Hex.encode(old.keyId)))
            #expect(!error.reason.contains(Hex.encode(old.atRest.revealedBytes())))
        }
    }

    @Test("the master key file: one key a line, the first first; a bad or repeated line is named by number")
    func keyFile() throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/master.keys"
        let first = SystemRandom().bytes(count: 32)
        let second = SystemRandom().bytes(count: 32)
        try Data("\(Hex.encode(first))\n\n\(Hex.encode(second).uppercased())  \r\n".utf8)
            .write(to: URL(fileURLWithPath: file))
        #expect(
            try SecretLoading.masterKeys(.file(path: file)) == [
                SecureBytes(copying: first), SecureBytes(copying: second),
            ])

        for (text, line) in [
            ("\(Hex.encode(first))\n\(Hex.encode(first))\n", "line 2"),
            ("\(Hex.encode(first))\nnot a key\n", "line 2"),
            ("\n\n\(Hex.encode(first.prefix(31)))\n", "line 3"),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            do {
                _ = try SecretLoading.masterKeys(.file(path: file))
                Issue.record("\(line) was taken")
            } catch {
                #expect(error.code == .invalidConfiguration)
                #expect(error.reason.contains(line), "\(error.reason)")
                #expect(!error.reason.contains(Hex.encode(first)) && !error.reason.contains("not a key"))
            }
        }
        try Data("\n \n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.masterKeys(.file(path: file))
        }
    }
}
