import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryServer
import Testing
import TestSupport

/// `refresh --server` through the binary (docs/formats.md §3), on each backend: a share file and then
/// a store refreshed in place; the same key signs (FROST and ECDSA) from the new generation, with a
/// fresh pair setup kept beside it, and a copy of the old share, kept aside, signs nothing.
@Suite("Refresh through the CLI", .serialized)
struct RefreshCLITests {
    typealias World = ECDSALifecycleCLITests.World

    @Test(
        "a file and then a store refreshed: the new generation signs under the same key, the old copy is refused",
        .timeLimit(.minutes(5)), arguments: AuditCLITests.Database.allCases)
    func refresh(database: AuditCLITests.Database) async throws {
        try await World.with(database, story)
    }

    @Test(
        "serve --refresh-after-days outside 1…36500 is a usage error that says what it takes",
        arguments: ["0", "36501"])
    func refreshPolicyOutOfRange(days: String) throws {
        let run = try CLIRunner.run(
            "share-recovery", ["serve", "--database", "server.sqlite", "--refresh-after-days", days])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("--refresh-after-days must be 1…36500"), "\(run.stderr)")
    }

    private func story(_ world: World) throws {
        let server = ["--server", world.base, "--user-id", world.user]
        let sign = try world.token("sign")
        try Data("transfer".utf8).write(to: world.dir.appendingPathComponent("message"))
        func signing(_ mode: String, _ device: [String]) throws -> CLIRun {
            try world.run(
                ["sign"] + server + ["--token-file", sign, "--mode", mode, "--message-file", "message"] + device)
        }
        let created = try StrictJSON.parse(
            try world.succeed(
                ["wallet", "create"] + server + [
                    "--token-file", sign, "--curve", "secp256k1", "--wallet-id", "w-refresh", "--out", "share.json",
                ]))
        try FileManager.default.copyItem(
            at: world.dir.appendingPathComponent("share.json"), to: world.dir.appendingPathComponent("leaked.json"))

        // A share file, refreshed into a new file with its pair setup beside it.
        let refreshed = try StrictJSON.parse(
            try world.succeed(
                ["refresh"] + server + ["--token-file", sign, "--signing-share", "share.json", "--out", "next.json"]))
        #expect(refreshed["publicKey"] == created["publicKey"] && refreshed["generation"] == .number("1"))
        #expect(refreshed["setId"] != created["setId"] && world.exists("next.json.pairsetup"))
        for mode in ["ecdsa", "bip340"] {
            let signed = try signing(mode, ["--signing-share", "next.json"])
            #expect(signed.status == 0, "\(mode): \(signed.stderr)")
            #expect(try StrictJSON.parse(signed.stdout)["publicKey"] == created["publicKey"])
            let old = try signing(mode, ["--signing-share", "leaked.json"])
            #expect(old.status == 1 && old.stdout.isEmpty, "\(mode): \(old.stderr)")
        }
        let again = try world.run(
            ["refresh"] + server + ["--token-file", sign, "--signing-share", "next.json", "--out", "share.json"])
        #expect(again.status != 0 && !again.stderr.isEmpty)

        // A store, refreshed in place: its current share and kept setup are the next generation's.
        try Data("482916\n".utf8).write(to: world.dir.appendingPathComponent("passcode"))
        _ = try world.succeed([
            "store", "init", "--store", "device", "--passcode-file", "passcode", "--confirm-file", "passcode",
            "--share", "next.json", "--kdf-ops", "1", "--kdf-mem-kib", "8",
        ])
        let device = ["--store", "device", "--passcode-file", "passcode"]
        let kept = try world.bytes("device/ecdsa.pairsetup")
        let inStore = try StrictJSON.parse(
            try world.succeed(["refresh"] + server + ["--token-file", sign] + device))
        #expect(inStore["publicKey"] == created["publicKey"] && inStore["generation"] == .number("2"))
        #expect(try world.bytes("device/ecdsa.pairsetup") != kept)
        for mode in ["ecdsa", "bip340"] {
            let signed = try signing(mode, device)
            #expect(signed.status == 0, "\(mode): \(signed.stderr)")
            let old = try signing(mode, ["--signing-share", "next.json"])
            #expect(old.status == 1 && old.stdout.isEmpty, "\(mode): \(old.stderr)")
        }
    }
}
