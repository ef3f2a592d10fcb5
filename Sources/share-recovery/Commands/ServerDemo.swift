import Foundation
import Logging
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import ShareRecoveryServer

/// The demo against the reference server on SQLite, in this process: the wallet's birth by DKG with
/// the server, a signature, password and cloud-key backups, device loss, an OTP-verified recovery
/// with statuses, a signature under the same key, proof that the lost device's share is useless, and
/// the integrator events the story produced.
struct ServerDemo {
    let root: String

    func say(_ line: String) { Terminal.output(line) }

    func run() async throws {
        var logger = Logger(label: "share-recovery-demo")
        logger.logLevel = .error
        let otpFile = "\(root)/otp.jsonl"
        let secretFile = "\(root)/webhook-secret"
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, database: .sqlite(path: "\(root)/server.sqlite"),
            masterKey: .generatedFile(path: "\(root)/master-key"), webhookSecret: .generatedFile(path: secretFile),
            otpSender: FileOTPSender(path: otpFile),
            // The demo asks for one OTP-verified token per operation, far faster than a person would:
            // looser limits than `.standard` (5 flows per identifier per 15 minutes) keep it running.
            rateLimits: .init(
                verifyPerIdentifier: .init(limit: 100, windowSeconds: 900),
                verifyPerAddress: .init(limit: 1_000, windowSeconds: 900),
                flowCreationPerIdentifier: .init(limit: 100, windowSeconds: 900),
                flowCreationPerAddress: .init(limit: 1_000, windowSeconds: 900)),
            logger: logger)
        let server = try await RunningServer.start(configuration)
        defer { Task { await server.stop() } }
        let base = server.baseURL()
        say("share-recovery demo: reference server on \(base) (SQLite \(root)/server.sqlite)")
        let webhookSecret = SecureBytes(copying: Array(try Files.readTrimmedLine(secretFile).utf8))
        let api = DemoAPI(base: base, webhookSecret: webhookSecret, otpFile: otpFile)
        do {
            for curve in Curve.allCases { try await story(curve: curve, api: api) }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        try await showEvents(database: "\(root)/server.sqlite")
    }

    /// The integrator events the story produced, one line each (type, account, id), read from the outbox
    /// by the code of `share-recovery events list`. This server has no `--events-url`, so they wait there.
    private func showEvents(database path: String) async throws {
        var logger = Logger(label: "share-recovery-demo")
        logger.logLevel = .critical
        let events = try await AuditTrail.withDatabase(.sqlite(path: path), logger: logger) { storage in
            var collected: [JSONValue] = []
            var next: Int64? = 0
            while let after = next {
                let page = try await EventOutbox.page(storage, state: nil, account: nil, after: after, limit: 1_000)
                if case .array(let rows)? = page["events"] { collected += rows }
                next = nil
                if case .string(let cursor)? = page["nextCursor"] { next = Int64(cursor, radix: 16) }
            }
            return collected
        }
        say("\n== integrator events (share-recovery events list --database \(path)) ==")
        let lines = events.map { event -> (type: String, account: String, id: String) in
            func text(_ key: String) -> String {
                guard case .string(let value)? = event[key] else { return "?" }
                return value
            }
            return (text("type"), text("account"), text("id"))
        }
        let typeWidth = lines.map(\.type.count).max() ?? 0
        let accountWidth = lines.map(\.account.count).max() ?? 0
        for line in lines {
            let type = line.type.padding(toLength: typeWidth, withPad: " ", startingAt: 0)
            let account = line.account.padding(toLength: accountWidth, withPad: " ", startingAt: 0)
            say("  \(type)  \(account)  \(line.id)")
        }
        say(
            "\(events.count) events, in commit order; `serve --events-url` would POST each to the integrator, signed per Standard Webhooks (docs/server.md, \"Integrator events\")"
        )
    }

    private func story(curve: Curve, api: DemoAPI) async throws {
        say("\n== \(curve) wallet ==")
        let userId = "demo-user-\(curve)"
        let deviceRoot = "\(root)/\(curve)"
        try Files.makeDirectory(deviceRoot)
        // Demo-grade Argon2id for the device store only; cipherTexts use the production defaults.
        let storeArgon2 = try Argon2idParameters(opslimit: 2, memlimitKiB: 19_456)
        let passcode = SecureBytes(copying: Array("482916".utf8))

        // 1. Create the wallet by DKG: the device is party 1, the server's custodian party 2; nobody holds the key.
        let wallet = HTTPWalletClient(
            baseURL: api.client.base,
            tokenProvider: { purpose in try await api.token(userId: userId, purpose: purpose) })
        let created = try await wallet.createWallet(clientId: userId, walletId: "demo-wallet-\(curve)", curve: curve)
        let device = try FileSigningShareStore(directory: "\(deviceRoot)/device", argon2: storeArgon2)
        try await device.createPasscode(passcode, confirmation: passcode)
        try await device.stage(created)
        try await device.promoteStaged()
        say("wallet created by DKG with the server (no dealer): public key \(created.publicKey.hex)")

        // 2. Sign with the device and the custodian; an ordinary verifier checks the signature.
        let mode = SigningMode.default(for: curve)
        let message = Array("pay bob 1 coin (\(curve))".utf8)
        let first = try await wallet.sign(share: created, clientId: userId, message: message)
        let firstValid = SignatureVerifier.verify(
            signature: first.signature, message: message, publicKey: created.publicKey, mode: mode)
        say("signed (\(mode)): \(Hex.encode(first.signature).prefix(32))…, valid: \(firstValid)")
        // secp256k1 also signs Ethereum's way: threshold ECDSA with the custodian over a kept pair setup.
        var ethereum: ECDSADemo?
        if curve == .secp256k1 {
            let ecdsa = try ECDSADemo(wallet: wallet, userId: userId, walletKey: created.publicKey)
            say("Ethereum address: \(ecdsa.address)")
            try await ecdsa.sign(share: created, store: device, say: say)
            ethereum = ecdsa
        }

        // 3. Back up with a password and a cloud key (each write needs a fresh OTP-issued token).
        let engine = RecoveryEngine(configuration: api.engineConfiguration(userId: userId, store: device))
        let password = BackupSecret.text("correct horse battery staple")
        let cloudKey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        try await engine.backup(method: .password, secret: password)
        try await engine.backup(method: .cloudKey, secret: cloudKey, keyId: "kms/demo")
        say("backed up: \(try await engine.activatedRecoveryMethods().map(\.name).joined(separator: ", "))")

        // 4. Lose the device.
        try await device.remove()
        say("device lost: its store is gone")

        // 5. A new device: OTP flow, then recovery with the cipherText fetched by backup method.
        let newDevice = try FileSigningShareStore(directory: "\(deviceRoot)/new-device", argon2: storeArgon2)
        try await newDevice.createPasscode(passcode, confirmation: passcode)
        let recovering = RecoveryEngine(configuration: api.engineConfiguration(userId: userId, store: newDevice))
        let recovered = try await recoverShowingStatuses(recovering, method: .password, secret: password)
        let same = recovered.publicKey == created.publicKey
        say("recovered: generation \(recovered.generation), new set \(recovered.setId), public key unchanged: \(same)")

        // 6. Sign again under the same public key.
        let again = try await wallet.sign(share: recovered, clientId: userId, message: message)
        let againValid = SignatureVerifier.verify(
            signature: again.signature, message: message, publicKey: created.publicKey, mode: mode)
        say("signed again after recovery under the same key, valid: \(againValid)")
        try await ethereum?.sign(share: recovered, store: newDevice, say: say)

        // 7. The lost device's share is useless: the custodian signs and reshares only with the new set.
        var refused = ""
        do {
            _ = try await wallet.sign(share: created, clientId: userId, message: message)
        } catch let error as ShareRecoveryError {
            refused = error.code.description
        } catch let error as TransportError {
            refused = error.code.rawValue
        }
        say("old device share refused for signing: \(refused.isEmpty ? "no" : "yes (\(refused))")")
        guard same, firstValid, againValid, !refused.isEmpty else {
            throw ShareRecoveryError(.publicKeyMismatch, "the demo's wallet did not behave as expected")
        }
    }
}

/// The ECDSA part of the secp256k1 story: the wallet's Ethereum address, and a signature of a
/// Keccak-256 digest with the custodian whose recovered signer (ecrecover) is that address. The
/// device keeps its pair setup in its store, as `sign --server --mode ecdsa` does.
struct ECDSADemo {
    let wallet: HTTPWalletClient
    let userId: String
    let walletKey: Point
    let address: String

    init(wallet: HTTPWalletClient, userId: String, walletKey: Point) throws {
        self.wallet = wallet
        self.userId = userId
        self.walletKey = walletKey
        address = try EthereumAddress.checksummed(walletKey)
    }

    /// Signs with the share, over the setup its store keeps (made and kept first when there is none:
    /// after a recovery the old one does not open), and says who ecrecover names.
    func sign(share: ShareRecord, store: FileSigningShareStore, say: (String) -> Void) async throws {
        let digest = Keccak256.hash(Array("send 0.1 ETH to bob (generation \(share.generation))".utf8))
        let kept = try await store.keptPairSetup().flatMap { try KeptPairSetup.open($0, share: share) }
        let (signature, _) = try await wallet.signECDSA(share: share, setup: kept, clientId: userId, digest: digest) {
            fresh in try await store.keepPairSetup(try KeptPairSetup.seal(fresh, share: share))
        }
        let signer = try EthereumAddress.checksummed(try signature.recoverPublicKey(digest: digest))
        let valid = signature.isValid(digest: digest, publicKey: walletKey)
        say(
            "signed (ecdsa, generation \(share.generation)): r \(Hex.encode(signature.r).prefix(16))…, ecrecover → \(signer), the wallet's address: \(signer == address), valid: \(valid)"
        )
        guard signer == address, valid else {
            throw ShareRecoveryError(
                .publicKeyMismatch, "the demo's ECDSA signature did not recover the wallet's address")
        }
    }
}

/// The demo's tokens: OTP flows whose codes it reads from the file sender.
final class DemoAPI: Sendable {
    let client: ReferenceServerClient
    let webhookSecret: SecureBytes
    let otpFile: String
    /// Purposes already announced, so the demo says once, not per token, where tokens come from.
    private let announced = Locked<Set<String>>([])

    init(base: String, webhookSecret: SecureBytes, otpFile: String) {
        self.client = ReferenceServerClient(base: base)
        self.webhookSecret = webhookSecret
        self.otpFile = otpFile
    }

    func engineConfiguration(userId: String, store: any SigningShareStore) -> RecoveryEngine.Configuration {
        client.engineConfiguration(
            userId: userId, store: store, tokens: { purpose in try await self.token(userId: userId, purpose: purpose) },
            webhookSecret: webhookSecret)
    }

    /// An OTP flow for the purpose: create it, read the code from the file sender, verify it.
    func token(userId: String, purpose: TokenPurpose) async throws -> String {
        let serverPurpose = purpose.rawValue
        let flowId = try await client.startFlow(identifier: userId, purpose: serverPurpose)
        let code = try FileOTPSender(path: otpFile).code(flowId: flowId)
        let token = try await client.verifyFlow(flowId: flowId, code: code)
        if announced.withLock({ $0.insert("\(userId)/\(serverPurpose)").inserted }) {
            Terminal.output("  tokens for \(serverPurpose): OTP flows verified with codes read from the file sender")
        }
        return String(decoding: token.revealedBytes(), as: UTF8.self)
    }
}
