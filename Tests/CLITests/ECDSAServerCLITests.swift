import Foundation
import ShareCrypto
import ShareRecovery
import Testing

extension MethodsCLITests {
    /// `sign --server --mode ecdsa` through the binary against `serve`: a wallet made by
    /// `wallet create` signs a digest with the custodian over a fresh pair setup, for the wallet key
    /// and a child key, and `verify --mode ecdsa` (libsecp256k1) takes both signatures.
    @Test("sign --server --mode ecdsa: the device and the custodian sign; verify --mode ecdsa takes it")
    func ecdsaWithTheServer() throws {
        let sign = try token("sign", user: "ecdsa-cli")
        let created = try run([
            "wallet", "create", "--server", server.base, "--user-id", "ecdsa-cli", "--token-file", sign, "--curve",
            "secp256k1", "--wallet-id", "w-ecdsa", "--out", "device-share.json",
        ])
        #expect(created.status == 0, "\(created.stderr)")
        let device = try ShareRecord(
            json: String(contentsOf: dir.appendingPathComponent("device-share.json"), encoding: .utf8))
        try Data("a transaction's signing payload".utf8).write(to: dir.appendingPathComponent("payload.bin"))
        for path in [[], ["--path", "m/0/1"]] {
            let signed = try run(
                [
                    "sign", "--server", server.base, "--user-id", "ecdsa-cli", "--token-file", sign, "--signing-share",
                    "device-share.json", "--mode", "ecdsa", "--message-file", "payload.bin",
                ] + path)
            #expect(signed.status == 0, "\(path): \(signed.stderr)")
            let printed = try StrictJSON.parse(Array(signed.stdout.utf8))
            guard case .string(let der)? = printed["der"], case .string(let digest)? = printed["digest"] else {
                Issue.record("no der or digest in \(signed.stdout)")
                continue
            }
            #expect(digest == Hex.encode(Keccak256.hash(Array("a transaction's signing payload".utf8))))
            let verified = try run(
                [
                    "verify", "--mode", "ecdsa", "--public-key", device.publicKey.hex, "--message-file", "payload.bin",
                    "--signature", der,
                ] + path)
            #expect(verified.status == 0 && verified.stdout.contains("true"), "\(path): \(verified.stderr)")
        }
        // --taproot has no ECDSA form: refused before any file is read or the server asked.
        let refused = try run([
            "sign", "--server", server.base, "--user-id", "ecdsa-cli", "--token-file", sign, "--signing-share",
            "missing.json", "--mode", "ecdsa", "--message-file", "payload.bin", "--taproot",
        ])
        #expect(refused.status == 2 && refused.stderr.contains("--taproot"), "\(refused.stderr)")
    }
}
