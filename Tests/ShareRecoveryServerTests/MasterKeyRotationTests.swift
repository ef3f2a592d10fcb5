import Foundation
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// Several master keys (docs/server.md, "Rotating the master key"): a sealed value names its key by key
/// id, the first key seals and every one opens, and `keys rotate` re-seals everything under the first
/// beside running servers.
@Suite("Master key rotation")
struct MasterKeyRotationTests {
    struct Interrupted: Error {}

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

    @Test(
        "a rotation beside running servers: both keys open during it, an interrupted run resumes, and afterwards the new key alone opens everything",
        .timeLimit(.minutes(5)), arguments: TestBackend.allCases)
    func rotation(backend: TestBackend) async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let oldKey = SystemRandom().bytes(count: 32)
        let newKey = SystemRandom().bytes(count: 32)
        let oldId = SecretRing.keyId(of: SecureBytes(copying: oldKey))
        let newId = SecretRing.keyId(of: SecureBytes(copying: newKey))
        // Server 0 has taken the new key as the second line (the rotation's first step), server 1
        // seals under it already (the second); after the rotation the old key leaves the file.
        let added = directory + "/added.keys"
        let moved = directory + "/moved.keys"
        let alone = directory + "/alone.keys"
        let stranger = directory + "/stranger.keys"
        try Data("\(Hex.encode(oldKey))\n\(Hex.encode(newKey))\n".utf8).write(to: URL(fileURLWithPath: added))
        try Data("\(Hex.encode(newKey))\n\(Hex.encode(oldKey))\n".utf8).write(to: URL(fileURLWithPath: moved))
        try Data("\(Hex.encode(newKey))\n".utf8).write(to: URL(fileURLWithPath: alone))
        try Data("\(Hex.encode(SystemRandom().bytes(count: 32)))\n".utf8).write(to: URL(fileURLWithPath: stranger))
        var started = 0
        var template: ServerConfiguration?
        var logger = Logger(label: "rotation")
        logger.logLevel = .critical
        try await TestWorld.with(backend, servers: 2) { configuration in
            configuration.masterKey = .file(path: started == 0 ? added : moved)
            template = configuration
            started += 1
        } _: { world in
            let storage = try world.inspector()
            defer { Task { await storage.close() } }

            // Under the old key (server 0): a wallet, and an idempotent verify's kept answer.
            let token = try await world.token(for: "rotating", purpose: "sign", server: 0)
            let share = try await WalletWire.createWallet(
                world: world, userId: "rotating", walletId: "w-old", curve: .secp256k1, token: token, server: 0)
            let setup = try await HTTPWalletClient(baseURL: world.servers[0].baseURL(), tokenProvider: { _ in token })
                .makePairSetup(share: share, clientId: "rotating")
            let flowId = try await world.createFlow(identifier: "rotating", purpose: "recover", server: 0)
            let code = try #require(world.otp.code(flowId: flowId))
            let verify = JSONValue.object([("code", .string(code))])
            let idempotencyKey = Hex.encode(SystemRandom().bytes(count: 16))
            let first = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: verify,
                headers: [("Idempotency-Key", idempotencyKey)], server: 0)
            #expect(first.status == 200)
            // A file without the values' keys: refused, naming the table, row and key id.
            do {
                _ = try await rotateMasterKey(world.database, masterKey: .file(path: stranger), logger: logger)
                Issue.record("a rotation ran without the values' keys")
            } catch let error as MasterKeyRotationError {
                #expect(error.code == .unknownMasterKey)
                #expect(
                    error.reason.hasPrefix("server_keys (name custodian-x25519) is sealed under master key id \(oldId)")
                )
                #expect(!error.reason.contains(Hex.encode(oldKey)) && !error.reason.contains(Hex.encode(newKey)))
            }

            // The custodian key as servers sealed it before key ids: the rotation re-seals that too.
            let sealer = AtRestSealer(keys: [try Self.derived(SecureBytes(copying: oldKey))])
            let keyRow = try #require(
                try await storage.read {
                    try await $0.query(
                        "SELECT sealed_secret FROM server_keys WHERE name = ?", [.text("custodian-x25519")])
                }.first)
            let custodianSecret = try sealer.open(
                try keyRow.blob("sealed_secret"), table: "server_keys", row: ["custodian-x25519"])
            let legacy = try Self.legacySeal(
                custodianSecret, keys: try Self.derived(SecureBytes(copying: oldKey)), table: "server_keys",
                row: ["custodian-x25519"])
            _ = try await storage.transaction {
                try await $0.query("UPDATE server_keys SET sealed_secret = ?", [.blob(legacy)])
            }
            // A legacy value names no key: one the file cannot open is unreadable, with what to try.
            do {
                _ = try await rotateMasterKey(world.database, masterKey: .file(path: stranger), logger: logger)
                Issue.record("a legacy value opened without its key")
            } catch let error as MasterKeyRotationError {
                #expect(error.code == .sealedValueUnreadable)
                #expect(error.reason.contains("before key ids"), "\(error.reason)")
            }

            // Server 1 seals under the new key and takes what server 0 made: its token, its wallet, its
            // kept answer (found under the old key's scope); server 0 takes server 1's.
            let replayed = try await world.send(
                .POST, "/recovery/flows/\(flowId)/verify", json: verify,
                headers: [("Idempotency-Key", idempotencyKey)], server: 1)
            #expect(replayed.status == 200 && replayed.string("token") == first.string("token"))
            _ = try await WalletWire.sign(
                world: world, share: share, userId: "rotating", message: Array("one".utf8), mode: .bip340,
                token: token, server: 1)
            let newToken = try await world.token(for: "rotating-too", purpose: "sign", server: 1)
            let newShare = try await WalletWire.createWallet(
                world: world, userId: "rotating-too", walletId: "w-new", curve: .ed25519, token: newToken, server: 1)
            _ = try await WalletWire.sign(
                world: world, share: newShare, userId: "rotating-too", message: Array("two".utf8), mode: .rfc9591,
                token: newToken, server: 0)

            // Requests keep going to the server that seals under the new key while the rotation runs.
            let load = Task {
                var statuses: [Int] = []
                for round in 0..<6 {
                    _ = try await WalletWire.sign(
                        world: world, share: share, userId: "rotating", message: Array("load \(round)".utf8),
                        mode: .bip340, token: token, server: 1)
                    statuses.append(try await world.send(.GET, "/custodian/key", server: 1).status)
                }
                return statuses
            }
            // Interrupted after its first re-sealed value, then run again: it resumes.
            let resealedBefore = Locked(0)
            await #expect(throws: Interrupted.self) {
                _ = try await rotateMasterKey(
                    world.database, masterKey: .file(path: moved), pageSize: 2, logger: logger
                ) { _ in
                    try resealedBefore.withLock { count in
                        count += 1
                        if count == 1 { throw Interrupted() }
                    }
                }
            }
            let result = try await rotateMasterKey(
                world.database, masterKey: .file(path: moved), pageSize: 2, logger: logger)
            #expect(try await load.value.allSatisfy { $0 == 200 })
            #expect(result.keyId == newId && result.keys == 2)
            #expect(result.remaining == 0 && result.resealed > 0, "\(result)")
            let counts = Dictionary(uniqueKeysWithValues: result.tables.map { ($0.table, $0) })
            #expect(counts["server_keys"]?.values == 1)
            #expect((counts["signing_shares"]?.values ?? 0) == 2)
            #expect((counts["idempotency_keys"]?.values ?? 0) >= 1)
            #expect(counts["ecdsa_pair_setups"]?.values == 1)
            // The pair setup, re-sealed, still signs.
            _ = try await HTTPWalletClient(baseURL: world.servers[1].baseURL(), tokenProvider: { _ in token })
                .signECDSA(share: share, setup: setup, clientId: "rotating", digest: Keccak256.hash(Array("pay".utf8)))
            // Run again: nothing left to do.
            let again = try await rotateMasterKey(world.database, masterKey: .file(path: moved), logger: logger)
            #expect(again.resealed == 0 && again.remaining == 0)

            // The old key leaves the file: every value opens under the new key alone, and a server
            // started with it alone opens the custodian key (re-sealed from the legacy layout).
            let afterwards = try await rotateMasterKey(world.database, masterKey: .file(path: alone), logger: logger)
            #expect(afterwards.resealed == 0 && afterwards.remaining == 0 && afterwards.keys == 1)
            var configuration = try #require(template)
            configuration.masterKey = .file(path: alone)
            let server = try await RunningServer.start(configuration)
            let key = try await HTTPClientRequestShim(url: server.baseURL() + "/custodian/key").fetchJSON()
            await server.stop()
            let expected = try await world.send(.GET, "/custodian/key", server: 0).json
            #expect(key?["publicKey"] != nil && key?["publicKey"] == expected?["publicKey"])
        }
    }

    @Test("every sealed column of the schema is walked by keys rotate")
    func everySealedColumn() async throws {
        try await TestWorld.withStorage(.sqlite) { storage in
            let sealed = try await storage.read { transaction in
                var found: Set<String> = []
                for table in try await transaction.query("SELECT name FROM sqlite_master WHERE type = 'table'", []) {
                    let name = try table.text("name")
                    for column in try await transaction.query("SELECT name FROM pragma_table_info(?)", [.text(name)]) {
                        let columnName = try column.text("name")
                        if columnName.hasPrefix("sealed_") { found.insert("\(name).\(columnName)") }
                    }
                }
                return found
            }
            #expect(sealed == Set(SealedColumn.all.map { "\($0.table).\($0.column)" }))
        }
    }
}
