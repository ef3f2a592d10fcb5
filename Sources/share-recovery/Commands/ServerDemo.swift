import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import ShareRecoveryServer
import Synchronization

/// The demo against the reference server on SQLite, in this process: wallet creation, password and
/// cloud-key backups, device loss, an OTP-verified recovery with statuses, and proof that the lost
/// device's share is useless.
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
                verifyPerIdentifier: .init(limit: 100, windowSeconds: 900), verifyPerAddress: .init(limit: 1_000, windowSeconds: 900),
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
    }

    private func story(curve: Curve, api: DemoAPI) async throws {
        say("\n== \(curve) wallet ==")
        let userId = "demo-user-\(curve)"
        let deviceRoot = "\(root)/\(curve)"
        try Files.makeDirectory(deviceRoot)
        // Demo-grade Argon2id for the device store only; cipherTexts use the production defaults.
        let storeArgon2 = try Argon2idParameters(opslimit: 2, memlimitKiB: 19_456)
        let passcode = SecureBytes(copying: Array("482916".utf8))

        // 1. Create the wallet: party 1 stays on the device; party 2 is sealed to the custodian.
        let signing = try KeyGeneration.generate(curve: curve, walletId: "demo-wallet-\(curve)")
        try await api.registerCustodianShare(signing[1], clientId: userId)
        let device = try FileSigningShareStore(directory: "\(deviceRoot)/device", argon2: storeArgon2)
        try await device.createPasscode(passcode, confirmation: passcode)
        try await device.stage(signing[0])
        try await device.promoteStaged()
        say("wallet created: public key \(signing[0].publicKey.hex)")

        // 2. Back up with a password and a cloud key (each write needs a fresh OTP-issued token).
        let engine = RecoveryEngine(configuration: api.engineConfiguration(userId: userId, store: device))
        let password = BackupSecret.text("correct horse battery staple")
        let cloudKey = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        try await engine.backup(method: .password, secret: password)
        try await engine.backup(method: .cloudKey, secret: cloudKey, keyId: "kms/demo")
        say("backed up: \(try await engine.activatedRecoveryMethods().map(\.name).joined(separator: ", "))")

        // 3. Lose the device.
        try await device.remove()
        say("device lost: its store is gone")

        // 4. A new device: OTP flow, then recovery with the cipherText fetched by backup method.
        let newDevice = try FileSigningShareStore(directory: "\(deviceRoot)/new-device", argon2: storeArgon2)
        try await newDevice.createPasscode(passcode, confirmation: passcode)
        let recovering = RecoveryEngine(configuration: api.engineConfiguration(userId: userId, store: newDevice))
        let recovered = try await recoverShowingStatuses(recovering, method: .password, secret: password)
        let same = recovered.publicKey == signing[0].publicKey
        say("recovered: generation \(recovered.generation), new set \(recovered.setId), public key unchanged: \(same)")

        // 5. The lost device's share is useless: the custodian no longer holds its set.
        let oldEngine = RecoveryEngine(
            configuration: api.engineConfiguration(userId: userId, store: InMemorySigningShareStore(current: signing[0])))
        var refused = ""
        do {
            try await oldEngine.backup(method: .passkey, secret: .keyMaterial(SecureBytes(zeros: 32)))
        } catch let error as ShareRecoveryError {
            refused = error.code.description
        }
        say("old device share refused by the custodian: \(refused.isEmpty ? "no" : "yes (\(refused))")")
        guard same, !refused.isEmpty else {
            throw ShareRecoveryError(.publicKeyMismatch, "the demo's recovery did not behave as expected")
        }
    }
}

/// The demo's HTTP calls that the engine does not make itself: custodian registration and OTP flows.
final class DemoAPI: Sendable {
    let base: String
    let webhookSecret: SecureBytes
    let otpFile: String
    /// Purposes already announced, so the demo says once, not per token, where tokens come from.
    private let announced = Mutex<Set<String>>([])

    init(base: String, webhookSecret: SecureBytes, otpFile: String) {
        self.base = base
        self.webhookSecret = webhookSecret
        self.otpFile = otpFile
    }

    func engineConfiguration(userId: String, store: any SigningShareStore) -> RecoveryEngine.Configuration {
        let tokens: TokenProvider = { purpose in try await self.token(userId: userId, purpose: purpose) }
        return RecoveryEngine.Configuration(
            userId: userId, custodian: HTTPCustodian(baseURL: base, tokenProvider: tokens), shareStore: store,
            cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens),
            cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens),
            custodianBackupSink: HTTPCustodianBackupSink(webhookBaseURL: "\(base)/webhook", webhookSecret: webhookSecret))
    }

    /// Seals the custodian's signing share to the server's key and registers it.
    func registerCustodianShare(_ share: ShareRecord, clientId: String) async throws {
        let key = try await request("GET", "/custodian/key", body: nil)
        guard case .string(let hex)? = key.member("publicKey"), let publicKey = Hex.decode(hex) else {
            throw ShareRecoveryError(.malformedInput, "no custodian key")
        }
        let sealed = try SealedBox.seal(try share.binary(), to: publicKey)
        _ = try await request(
            "POST", "/custodian/wallets",
            body: .object([("clientId", .string(clientId)), ("sealedShare", .string(Base64.encode(sealed)))]), webhook: true)
    }

    /// An OTP flow for the purpose: create it, read the code from the file sender, verify it.
    func token(userId: String, purpose: TokenPurpose) async throws -> String {
        let serverPurpose = purpose == .listRecoveryMethods ? "recover" : purpose.rawValue
        let flow = try await request(
            "POST", "/recovery/flows", body: .object([("identifier", .string(userId)), ("purpose", .string(serverPurpose))]))
        guard case .string(let flowId)? = flow.member("flowId") else { throw ShareRecoveryError(.malformedInput, "no flowId") }
        let code = try codeFromFile(flowId: flowId)
        let verified = try await request("POST", "/recovery/flows/\(flowId)/verify", body: .object([("code", .string(code))]))
        guard case .string(let token)? = verified.member("token") else { throw ShareRecoveryError(.malformedInput, "no token") }
        if announced.withLock({ $0.insert("\(userId)/\(serverPurpose)").inserted }) {
            Terminal.output("  tokens for \(serverPurpose): OTP flows verified with codes read from the file sender")
        }
        return token
    }

    private func codeFromFile(flowId: String) throws -> String {
        for line in try Files.readText(otpFile).split(separator: "\n").reversed() {
            if let value = try? StrictJSON.parse(String(line)), case .string(flowId)? = value.member("flowId"),
                case .string(let code)? = value.member("code")
            {
                return code
            }
        }
        throw ShareRecoveryError(.notFound, "no one-time code for the flow in \(otpFile)")
    }

    private func request(_ method: String, _ path: String, body: JSONValue?, webhook: Bool = false) async throws -> JSONValue {
        var request = HTTPClientRequest(url: base + path)
        request.method = .RAW(value: method)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: JSONWriter.write(body)))
        }
        if webhook { request.headers.add(name: "X-Webhook-Secret", value: webhookSecret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) }
        let response = try await HTTPTransport.sharedClient.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw ShareRecoveryError(.requestRejected, "\(method) \(path): HTTP \(response.status.code)")
        }
        if bytes.readableBytes == 0 { return .null }
        return try StrictJSON.parse(Array(bytes.readableBytesView))
    }
}

extension JSONValue {
    /// A member of an object, or `nil`.
    func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}
