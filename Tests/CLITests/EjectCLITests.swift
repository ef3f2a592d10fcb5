import Foundation
import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

extension CLITests {
    /// Offline eject (docs/eject.md) through the binary: from the recovered signing set and from the
    /// user backup share with the custodian's backup shares, the same key, whose public key computed
    /// apart from the engine is the wallet's; the key file is new and 0600; without --reveal-secret
    /// no output shows the key; the command line's refusals.
    @Test(arguments: ["secp256k1", "ed25519"])
    func ejectOffline(curve: String) throws {
        let (dir, recover) = try story(curve: curve, method: "password", secret: Data("eject pass phrase\n".utf8))
        #expect(recover.status == 0, "\(recover.stderr)")
        let wallet = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("keys/share-1.json"), encoding: .utf8))
        let transcript = Transcript()
        func eject(_ arguments: [String], status: Int32) throws -> CLIRun {
            let result = try CLIRunner.run("share-recovery", ["eject"] + arguments, in: dir)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            transcript.runs.append(result)
            return result
        }
        func keyFile(_ path: String) throws -> JSONValue {
            let url = dir.appendingPathComponent(path)
            let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(path) has mode \(String(mode ?? 0, radix: 8))")
            return try StrictJSON.parse(Array(try Data(contentsOf: url)))
        }

        let fromSet = try eject(
            [
                "--signing-share", "recovered/share-1.json", "--signing-share", "recovered/share-2.json", "--out",
                "ejected/set.json",
            ],
            status: 0)
        #expect(fromSet.stderr.contains("FULL PRIVATE KEY"))
        let printed = try StrictJSON.parse(Array(fromSet.stdout.utf8))
        #expect(printed["publicKey"] == .string(wallet.publicKey.hex) && printed["out"] == .string("ejected/set.json"))
        #expect(printed["privateKeyHex"] == nil)
        let setKey = try keyFile("ejected/set.json")
        guard case .string(let hex)? = setKey["privateKeyHex"] else {
            Issue.record("no privateKeyHex in \(setKey)")
            return
        }
        #expect(ExportedKeyCheck.publicKey(ofHex: hex, curve: wallet.curve) == wallet.publicKey.rawRepresentation)
        if wallet.curve == .secp256k1 {
            guard case .string(let wif)? = setKey["wif"], let decoded = ExportedKeyCheck.wif(wif) else {
                Issue.record("no valid wif in the key file")
                return
            }
            #expect(decoded.version == 0x80 && decoded.key == ExportedKeyCheck.hexBytes(hex))
            guard case .string(let xprv)? = setKey["xprv"] else {
                Issue.record("no xprv in the key file")
                return
            }
            #expect(xprv.hasPrefix("xprv") && ExportedKeyCheck.base58(xprv)?.count == 82)
        } else {
            #expect(setKey["wif"] == nil && setKey["privateKeyForm"] != nil)
        }

        // From a backup: the user backup share and the custodian's exported backup shares.
        let revealed = try CLIRunner.run(
            "share-recovery",
            ["decrypt", "--cipher-text", "backup/cipherText", "--secret-file", "secret", "--reveal-secret"], in: dir)
        try Data(revealed.stdout.utf8).write(to: dir.appendingPathComponent("backup-share.json"))
        let custodian = [
            "--custodian-shares", "backup/custodian-backup-shares.json", "--custodian-key", "custodian/custodian.key",
            "--method", "password",
        ]
        _ = try eject(
            ["--signing-share", "backup-share.json"] + custodian + ["--out", "ejected/backup.json"], status: 0)
        #expect(try keyFile("ejected/backup.json")["privateKeyHex"] == .string(hex))

        // Refusals: no destination, both, an existing file, one share of two, a server option offline.
        let both = ["--signing-share", "recovered/share-1.json", "--signing-share", "recovered/share-2.json"]
        _ = try eject(both, status: 2)
        _ = try eject(both + ["--out", "x.json", "--reveal-secret"], status: 2)
        let exists = try eject(both + ["--out", "ejected/set.json"], status: 2)
        #expect(exists.stderr.contains("exists"))
        let tooFew = try eject(["--signing-share", "recovered/share-1.json", "--out", "ejected/one.json"], status: 1)
        #expect(tooFew.stderr.contains("invalidParameters"), "\(tooFew.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("ejected/one.json").path))
        _ = try eject(both + ["--user-id", "u", "--out", "ejected/u.json"], status: 2)
        _ = try eject(
            [
                "--signing-share", "backup-share.json", "--custodian-shares", "backup/custodian-backup-shares.json",
                "--out", "y.json",
            ], status: 2)
        _ = try eject(both + ["--network", "regtest", "--out", "ejected/n.json"], status: 2)

        // Nothing above showed the key; --reveal-secret shows it, in the same forms the search looks for.
        let key = try #require(ExportedKeyCheck.hexBytes(hex))
        let secrets = [SecretForms("ejected key", bytes: key)]
        for (index, output) in transcript.outputs.enumerated() {
            #expect(SecretForms.leaks(of: secrets, in: output).isEmpty, "output \(index): \(output)")
        }
        let shown = try CLIRunner.run("share-recovery", ["eject"] + both + ["--reveal-secret"], in: dir)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(!SecretForms.leaks(of: secrets, in: shown.stdout).isEmpty)
        #expect(SecretForms.leaks(of: secrets, in: shown.stderr).isEmpty)
    }
}

extension MethodsCLITests {
    /// `eject --server` through the binary against `serve`: a wallet made by `wallet create` signs,
    /// is ejected with a token of purpose eject (a sign token is refused), its key's public key,
    /// computed apart from the engine, is the wallet's, and `sign --server` is then refused.
    @Test("eject --server: an eject token releases the custodian's share once; the wallet signs no more")
    func ejectWithTheServer() throws {
        let sign = try token("sign", user: "ejecting")
        let created = try run([
            "wallet", "create", "--server", server.base, "--user-id", "ejecting", "--token-file", sign, "--curve",
            "secp256k1",
            "--wallet-id", "w-eject", "--out", "device-share.json",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let device = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("device-share.json"), encoding: .utf8))
        try Data("pay".utf8).write(to: dir.appendingPathComponent("msg.bin"))
        let signArguments = [
            "sign", "--server", server.base, "--user-id", "ejecting", "--token-file", sign, "--signing-share",
            "device-share.json",
            "--message-file", "msg.bin",
        ]
        #expect(try run(signArguments).status == 0)

        let ejectArguments = [
            "eject", "--server", server.base, "--user-id", "ejecting", "--signing-share", "device-share.json",
        ]
        let wrongToken = try run(ejectArguments + ["--token-file", sign, "--out", "refused.json"])
        #expect(wrongToken.status == 1 && wrongToken.stderr.contains("forbidden"), "\(wrongToken.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("refused.json").path))

        let eject = try token("eject", user: "ejecting")
        let ejected = try run(ejectArguments + ["--token-file", eject, "--out", "wallet-key.json"])
        #expect(ejected.status == 0, "\(ejected.stderr)")
        #expect(ejected.stderr.contains("FULL PRIVATE KEY"))
        let key = try StrictJSON.parse(Array(try Data(contentsOf: dir.appendingPathComponent("wallet-key.json"))))
        guard case .string(let hex)? = key["privateKeyHex"] else {
            Issue.record("no privateKeyHex")
            return
        }
        #expect(ExportedKeyCheck.publicKey(ofHex: hex, curve: .secp256k1) == device.publicKey.rawRepresentation)
        let secrets = [SecretForms("ejected key", bytes: try #require(ExportedKeyCheck.hexBytes(hex)))]
        #expect(SecretForms.leaks(of: secrets, in: ejected.stdout + ejected.stderr).isEmpty)

        let refused = try run(signArguments)
        #expect(refused.status == 1 && refused.stderr.contains("walletEjected"), "\(refused.stderr)")
        #expect(refused.stderr.contains("hint: this wallet was ejected"), "\(refused.stderr)")

        // The custodian's share is gone: the hints name the eject, never backup files or a missing token.
        let listed = try run(["device", "list", "--server", server.base, "--token-file", sign])
        #expect(
            listed.status == 1 && listed.stderr.contains("if the wallet was ejected")
                && !listed.stderr.contains("custodian-backup-shares"), "\(listed.stderr)")
        let again = try run(ejectArguments + ["--token-file", eject, "--out", "again.json"])
        #expect(again.status == 1 && !again.stderr.contains("missing, expired or"), "\(again.stderr)")
        #expect(
            again.stderr.contains("spent by its first use") || again.stderr.contains("hint: this wallet was ejected"),
            "\(again.stderr)")
    }
}
