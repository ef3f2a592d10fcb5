import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery

/// Known secrets through backup and recovery: no thrown error or description shows them in any
/// encoding, and every buffer that held one is zeroed when it is freed.
@Suite("Secret hygiene", .serialized)
struct SecretHygieneTests {
    /// A wallet, its password and cloud-key backups, and every secret involved, by name.
    struct Wallet {
        let random: DeterministicRandom
        let signing: [ShareRecord]
        let custodianKey: SealingKeyPair
        let password = "hygiene password \u{E9}t\u{E9} 42"
        let cloudKey: SecureBytes
        let integrator = InMemoryIntegrator()
        let custodian: LocalCustodian
        let engine: RecoveryEngine

        init(curve: Curve, seed: String) async throws {
            random = DeterministicRandom(seed: Array(seed.utf8))
            signing = try KeyGeneration.generate(curve: curve, walletId: "w-hygiene", using: random)
            custodianKey = SealingKeyPair(using: random)
            cloudKey = random.secureBytes(count: 32)
            custodian = LocalCustodian(key: custodianKey, shareSource: integrator, random: random)
            await custodian.register(signingShares: [signing[1]], clientId: "user-hygiene")
            engine = Self.engine(
                custodian: custodian, integrator: integrator, store: InMemorySigningShareStore(current: signing[0]),
                random: random)
        }

        static func engine(
            custodian: LocalCustodian, integrator: InMemoryIntegrator, store: any SigningShareStore,
            random: DeterministicRandom
        ) -> RecoveryEngine {
            RecoveryEngine(
                configuration: .init(
                    userId: "user-hygiene", custodian: custodian, shareStore: store, cipherTextSource: integrator,
                    cipherTextStore: integrator, custodianBackupSink: integrator, argon2: .minimum, random: random))
        }

        func secrets(extra: [ShareRecord]) -> [SecretForms] {
            var secrets = [
                SecretForms("password", bytes: Array(password.utf8)),
                SecretForms("password (NFC)", bytes: Array(password.precomposedStringWithCanonicalMapping.utf8)),
                SecretForms("cloud key", secret: cloudKey),
                SecretForms("custodian secret key", secret: custodianKey.secretKey),
            ]
            for record in signing + extra {
                guard let secret = record.secret else { continue }
                secrets.append(
                    SecretForms(
                        "\(record.kind) share \(record.partyIndex) gen \(record.generation)",
                        secret: secret.rawRepresentation))
            }
            return secrets
        }
    }

    /// Every way an error turns into text.
    static func texts(of error: any Error) -> [String] {
        ["\(error)", String(describing: error), String(reflecting: error), error.localizedDescription]
    }

    @Test("thrown errors and descriptions never show a secret", arguments: Curve.allCases)
    func errorsAndDescriptions(curve: Curve) async throws {
        let wallet = try await Wallet(curve: curve, seed: "hygiene errors \(curve)")
        let passwordBackup = try await wallet.engine.backup(method: .password, secret: .text(wallet.password))
        let cloudBackup = try await wallet.engine.backup(method: .cloudKey, secret: .keyMaterial(wallet.cloudKey))
        let userShare = try passwordBackup.decrypt(secret: .text(wallet.password))
        let recovered = try await Wallet.engine(
            custodian: wallet.custodian, integrator: wallet.integrator, store: InMemorySigningShareStore(),
            random: wallet.random
        ).recover(method: .cloudKey, secret: .keyMaterial(wallet.cloudKey))
        let secrets = wallet.secrets(extra: [userShare, recovered])

        var errors: [any Error] = []
        func collect(_ body: () async throws -> Void) async {
            do { try await body() } catch { errors.append(error) }
        }
        let fresh = Wallet.engine(
            custodian: wallet.custodian, integrator: wallet.integrator, store: InMemorySigningShareStore(),
            random: wallet.random)
        var wrongKey = wallet.cloudKey.revealedBytes()
        wrongKey[31] ^= 1
        await collect { try await fresh.recover(method: .password, secret: .text(wallet.password + "!")) }
        await collect {
            try await fresh.recover(method: .cloudKey, secret: .keyMaterial(SecureBytes(copying: wrongKey)))
        }
        await collect {
            try await fresh.recover(method: .cloudKey, secret: .keyMaterial(try wallet.cloudKey.slice(0..<31)))
        }
        await collect { try await fresh.recover(method: .cloudKey, secret: .text(wallet.password)) }
        await collect {
            try await fresh.recover(method: .password, cipherText: cloudBackup.base64, secret: .text(wallet.password))
        }
        var tampered = cloudBackup.bytes
        tampered[tampered.count - 1] ^= 1
        await collect {
            try await fresh.recover(
                method: .cloudKey, cipherText: Base64.encode(tampered), secret: .keyMaterial(wallet.cloudKey))
        }
        // The lost device's signing share no longer deals with the custodian.
        await collect { try await wallet.engine.backup(method: .passkey, secret: .keyMaterial(wallet.cloudKey)) }
        // Records carrying a known secret that fail their checks: the reason must not echo the secret.
        let userJSON = try StrictJSON.parse(userShare.json(includingSecret: true))
        await collect {
            _ = try ShareRecord(
                json: userShare.json(includingSecret: true).replacingOccurrences(
                    of: "\"partyIndex\":1", with: "\"partyIndex\":2"))
        }
        await collect {
            _ = try ShareRecord(jsonValue: Self.replacing("generation", in: userJSON, with: .number("-1")))
        }
        let otherSet = try KeyGeneration.generate(curve: curve, walletId: "w-hygiene", using: wallet.random)[0]
        await collect {
            _ = try ShareRecord(
                walletId: userShare.walletId, curve: curve, kind: .backup, threshold: 2, parties: 2, partyIndex: 1,
                generation: 0, setId: userShare.setId, secret: userShare.secret, commitments: otherSet.commitments)
        }
        var binary = try userShare.binary().revealedBytes()
        binary.append(0)
        await collect { _ = try ShareRecord(binary: SecureBytes(copying: binary)) }
        // Selection with the wrong custodian key lists every candidate with its reason.
        let shares = await wallet.integrator.fetchBackupShares(clientId: "user-hygiene")
        await collect {
            _ = try CustodianShareSelector(custodianKey: SealingKeyPair(using: wallet.random))
                .select(for: userShare, method: .password, candidates: shares).get()
        }
        await collect {
            _ = try await OfflineRecovery.recover(
                cipherText: passwordBackup.base64, secret: .text(wallet.password), custodianShares: shares,
                custodianKey: SealingKeyPair(using: wallet.random))
        }
        #expect(errors.count == 13, "every scenario threw: \(errors.count)")
        #expect(errors.allSatisfy { $0 is ShareRecoveryError }, "typed errors only: \(errors.map { type(of: $0) })")

        var texts = errors.flatMap(Self.texts)
        let values: [Any] = [
            wallet.signing[0], userShare, recovered, wallet.custodianKey, wallet.cloudKey,
            BackupSecret.text(wallet.password),
            try #require(userShare.secret), passwordBackup, cloudBackup, wallet.engine.configuration.custodian,
        ]
        texts += values.flatMap { ["\($0)", String(reflecting: $0)] }
        for text in texts {
            #expect(SecretForms.leaks(of: secrets, in: text).isEmpty, "leak in: \(text)")
        }
        // The search itself finds a secret that is there: the JSON a user asks for with the secret.
        #expect(!SecretForms.leaks(of: secrets, in: userShare.json(includingSecret: true)).isEmpty)
        #expect(!SecretForms.leaks(of: secrets, in: Base64.encode([7] + wallet.cloudKey.revealedBytes() + [9])).isEmpty)
    }

    static func replacing(_ key: String, in value: JSONValue, with replacement: JSONValue) -> JSONValue {
        guard case .object(let members) = value else { return value }
        return .object(members.map { $0.key == key ? ($0.key, replacement) : $0 })
    }

    // MARK: Wiping

    /// Records every buffer the hook reports: its address and whether it was all zeros.
    final class WipeLog: Sendable {
        private let wiped = Locked<[Int: Bool]>([:])
        func record(_ buffer: UnsafeRawBufferPointer) {
            let zeroed = buffer.allSatisfy { $0 == 0 }
            wiped.withLock { $0[Int(bitPattern: buffer.baseAddress)] = zeroed }
        }
        func wasZeroed(_ address: Int) -> Bool? { wiped.withLock { $0[address] } }
        /// Drops what an earlier buffer at this address reported, when a new one is tracked there.
        func forget(_ address: Int) { _ = wiped.withLock { $0.removeValue(forKey: address) } }
    }

    static func address(_ bytes: SecureBytes) -> Int { bytes.withUnsafeBytes { Int(bitPattern: $0.baseAddress) } }

    @Test(
        "every buffer that held a known secret is zeroed when the backup and recovery are over",
        arguments: Curve.allCases)
    func secretBuffersAreWiped(curve: Curve) async throws {
        let log = WipeLog()
        SecureBytes.wipeObserver = { log.record($0) }
        defer { SecureBytes.wipeObserver = nil }
        var tracked: [(String, Int)] = [] {
            didSet { if let last = tracked.last { log.forget(last.1) } }
        }
        // Kept alive on purpose: the hook must not report it before it goes away.
        var kept: SecureBytes? = SecureBytes(copying: Array("still in use, not yet wiped".utf8))
        let keptAddress = Self.address(kept!)
        log.forget(keptAddress)
        do {
            let wallet = try await Wallet(curve: curve, seed: "hygiene wipe \(curve)")
            let password = BackupSecret.text(wallet.password)
            guard case .text(let passwordBytes) = password.storage else {
                throw ShareRecoveryError(.invalidParameters, "not text")
            }
            tracked.append(("password", Self.address(passwordBytes)))
            tracked.append(("cloud key", Self.address(wallet.cloudKey)))
            tracked.append(("custodian secret key", Self.address(wallet.custodianKey.secretKey)))
            for share in wallet.signing {
                tracked.append(
                    ("signing share \(share.partyIndex)", Self.address(try #require(share.secret).rawRepresentation)))
            }
            let backup = try await wallet.engine.backup(method: .password, secret: password)
            try await wallet.engine.backup(method: .cloudKey, secret: .keyMaterial(wallet.cloudKey))
            let userShare = try backup.decrypt(secret: password)
            tracked.append(("user backup share", Self.address(try #require(userShare.secret).rawRepresentation)))
            let store = InMemorySigningShareStore()
            let recovered = try await Wallet.engine(
                custodian: wallet.custodian, integrator: wallet.integrator, store: store, random: wallet.random
            ).recover(method: .password, secret: password)
            tracked.append(("recovered signing share", Self.address(try #require(recovered.secret).rawRepresentation)))
            #expect(recovered.publicKey == wallet.signing[0].publicKey)
            for (name, address) in tracked {
                #expect(log.wasZeroed(address) == nil, "\(name) was freed while still in use")
            }
        }
        for (name, address) in tracked {
            #expect(
                log.wasZeroed(address) == true,
                "\(name): \(log.wasZeroed(address) == nil ? "never freed" : "freed without being zeroed")")
        }
        #expect(log.wasZeroed(keptAddress) == nil)
        kept = nil
        #expect(log.wasZeroed(keptAddress) == true)
        _ = kept
    }
}
