// server-recovery: backup and recovery through a running reference server, as a wallet app would.
//
// The server plays the integrator's API (cipherTexts, OTP-verified tokens) and the custodian
// (party 2). This program plays the device and, for registration and backup delivery, the
// integrator's backend (it holds the webhook secret). Start a server first:
//
//     share-recovery serve --port 8080 --database /tmp/example/server.sqlite
//
// then run, with the files that server created:
//
//     swift run server-recovery http://127.0.0.1:8080 \
//         /tmp/example/server.sqlite.webhook-secret share-recovery-otp.jsonl
//
// One-time codes are read from the server's code file: that stands in for the user reading an SMS.

import ExampleSupport
import Foundation
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

@main
struct ServerRecovery {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 3 else {
            FileHandle.standardError.write(
                Data("usage: server-recovery SERVER_URL WEBHOOK_SECRET_FILE OTP_FILE\n".utf8))
            exit(2)
        }
        let (server, secretFile, otpFile) = (arguments[1], arguments[2], arguments[3])
        await runExample {
            let api = ReferenceServerClient(base: server)
            let webhookSecret = try readSecret(secretFile)
            let userId = "example-user-\(UUID().uuidString.prefix(8))"

            // Each operation needs a token of its own purpose, from an OTP flow. Like an app, keep one per
            // purpose while it lasts: the server limits how many flows a user may start.
            let cache = TokenCache()
            let tokens: TokenProvider = { purpose in
                let name = purpose.rawValue
                return try await cache.token(for: name) {
                    let flowId = try await api.startFlow(identifier: userId, purpose: name)
                    let token = try await api.verifyFlow(flowId: flowId, code: try code(for: flowId, in: otpFile))
                    return String(decoding: token.revealedBytes(), as: UTF8.self)
                }
            }

            // 1. A wallet (development dealer; see password-recovery): the integrator registers the
            //    custodian's share with the server, sealed to the server's custodian key.
            let shares = try KeyGeneration.generate(curve: .ed25519, walletId: "example-wallet")
            try await api.registerCustodianShare(shares[1], clientId: userId, webhookSecret: webhookSecret)
            print("wallet: public key \(shares[0].publicKey.hex)")

            // 2. Back up under a password through the server.
            let device = InMemorySigningShareStore(current: shares[0])
            let password = BackupSecret.text("correct horse battery staple")
            try await RecoveryEngine(
                configuration: api.engineConfiguration(
                    userId: userId, store: device, tokens: tokens, webhookSecret: webhookSecret)
            ).backup(method: .password, secret: password)
            let reader = RecoveryEngine(
                configuration: api.engineConfiguration(
                    userId: userId, store: device, tokens: tokens, webhookSecret: nil))
            print("backed up: methods \(try await reader.activatedRecoveryMethods().map(\.name))")

            // 3. The device is lost; a new one recovers. The cipherText comes from the server by method,
            //    the custodian's backup share from the integrator's webhook, selected by the server.
            let newDevice = InMemorySigningShareStore()
            let progress = ProgressLine()
            let recovered = try await RecoveryEngine(
                configuration: api.engineConfiguration(
                    userId: userId, store: newDevice, tokens: tokens, webhookSecret: webhookSecret)
            ).recover(method: .password, secret: password, progress: progress.show)
            guard recovered.publicKey == shares[0].publicKey, recovered.generation == shares[0].generation + 1 else {
                throw ShareRecoveryError(.publicKeyMismatch, "the recovered share is not of this wallet")
            }
            print("recovered: generation \(recovered.generation), public key unchanged")
        }
    }

    /// A secret file's bytes, without one trailing newline.
    static func readSecret(_ path: String) throws -> SecureBytes {
        guard var bytes = FileManager.default.contents(atPath: path).map(Array.init) else {
            throw ShareRecoveryError(.notFound, "cannot read \(path): give the server's webhook secret file")
        }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return SecureBytes(copying: bytes)
    }

    /// The code the server wrote for a flow: its code file has one JSON object per line.
    static func code(for flowId: String, in path: String) throws -> SecureBytes {
        let text = String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
        for line in text.split(separator: "\n").reversed() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["flowId"] as? String == flowId, let code = object["code"] as? String
            else { continue }
            return SecureBytes(copying: Array(code.utf8))
        }
        throw ShareRecoveryError(.notFound, "no code for flow \(flowId) in \(path): give the server's --otp-file")
    }
}

/// One token per purpose, fetched once. (A single-use write spends an addOrUpdateRecovery token; this
/// program makes one backup, so it never needs a second.)
actor TokenCache {
    private var tokens: [String: String] = [:]

    func token(for purpose: String, fetch: @Sendable () async throws -> String) async throws -> String {
        if let token = tokens[purpose] { return token }
        let token = try await fetch()
        tokens[purpose] = token
        return token
    }
}
