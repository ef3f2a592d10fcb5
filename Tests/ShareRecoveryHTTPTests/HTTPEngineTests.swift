import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

/// The whole engine over HTTP: custodian sessions, cipherText store and source, and webhooks,
/// against ``FakeBackend`` (the API contract over in-process parts).
@Suite("Engine over HTTP")
struct HTTPEngineTests {
    static let userId = "user 7/ü"

    struct Setup {
        let backend: FakeBackend
        let signing: [ShareRecord]
        let random: DeterministicRandom
        let purposes = PurposeLog()

        init(seed: String, curve: Curve = .secp256k1, threshold: Int = 2, parties: Int = 2) async throws {
            random = DeterministicRandom(seed: Array(seed.utf8))
            signing = try KeyGeneration.generate(
                curve: curve, walletId: "w-http", threshold: threshold, parties: parties, using: random)
            backend = FakeBackend(custodianKey: SealingKeyPair(using: random), random: random)
            await backend.custodian.register(
                signingShares: Array(signing.dropFirst()), clientId: HTTPEngineTests.userId)
        }

        func engine(base: String, store: InMemorySigningShareStore) -> RecoveryEngine {
            let purposes = self.purposes
            let tokens: TokenProvider = { purpose in
                purposes.record(purpose)
                return purpose.rawValue
            }
            let transport = testTransport(timeout: .seconds(5))
            let secret = SecureBytes(copying: Array(FakeBackend.webhookSecret.utf8))
            return RecoveryEngine(
                configuration: .init(
                    userId: HTTPEngineTests.userId,
                    custodian: HTTPCustodian(
                        baseURL: base, tokenProvider: tokens, transport: transport, random: random),
                    shareStore: store,
                    cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens, transport: transport),
                    cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens, transport: transport),
                    custodianBackupSink: HTTPCustodianBackupSink(
                        webhookBaseURL: base + "/webhook", webhookSecret: secret, transport: transport),
                    argon2: .minimum, random: random))
        }
    }

    @Test(arguments: Curve.allCases)
    func backupLoseRecoverOverHTTP(curve: Curve) async throws {
        let setup = try await Setup(seed: "http engine \(curve)", curve: curve)
        try await TestServer.with {
            setup.backend.register(on: $0)
        } _: { base in
            setup.backend.started(base: base)
            let device = InMemorySigningShareStore(current: setup.signing[0])
            let engine = setup.engine(base: base, store: device)
            try await engine.backup(method: .password, secret: .text("pw"))
            try await engine.backup(method: .cloudKey, secret: .keyMaterial(SecureBytes(zeros: 32)), keyId: "kms/1")
            #expect(try await engine.activatedRecoveryMethods() == [.password, .cloudKey])
            #expect(await setup.backend.integrator.fetchBackupShares(clientId: Self.userId).count == 2)
            // Only the custodian's party was sealed to the server; the client's own sub-share never left.
            #expect(setup.backend.sealedParties.withLock { $0 } == [["2"], ["2"]])

            let newDevice = InMemorySigningShareStore()
            let recovered = try await setup.engine(base: base, store: newDevice)
                .recover(method: .password, secret: .text("pw"))
            #expect(recovered.publicKey == setup.signing[0].publicKey)
            #expect(recovered.generation == 1)
            #expect(await newDevice.currentShare() == recovered)
            let custodianShare = try #require(
                await setup.backend.custodian.currentSigningShares(clientId: Self.userId).first)
            #expect(custodianShare.setId == recovered.setId)

            #expect(
                Set(setup.purposes.all) == [.addOrUpdateRecovery, .recover],
                "\(setup.purposes.all)")
        }
    }

    @Test func twoOfThreeSealsToEveryCustodianParty() async throws {
        let setup = try await Setup(seed: "http 2of3", curve: .ed25519, threshold: 2, parties: 3)
        try await TestServer.with {
            setup.backend.register(on: $0)
        } _: { base in
            setup.backend.started(base: base)
            let engine = setup.engine(base: base, store: InMemorySigningShareStore(current: setup.signing[0]))
            try await engine.backup(method: .passkey, secret: .keyMaterial(SecureBytes(zeros: 32)))
            let newDevice = InMemorySigningShareStore()
            let recovered = try await setup.engine(base: base, store: newDevice)
                .recover(method: .passkey, secret: .keyMaterial(SecureBytes(zeros: 32)))
            #expect(recovered.parties == 3 && recovered.publicKey == setup.signing[0].publicKey)
            #expect(setup.backend.sealedParties.withLock { $0 } == [["2", "3"], ["2", "3"]])
            #expect(
                await setup.backend.custodian.currentSigningShares(clientId: Self.userId).map(\.partyIndex) == [2, 3])
        }
    }

    @Test func rotatedBackupFailsWithTheCustodiansCodeAndChangesNothing() async throws {
        let setup = try await Setup(seed: "http rotate")
        try await TestServer.with {
            setup.backend.register(on: $0)
        } _: { base in
            setup.backend.started(base: base)
            let engine = setup.engine(base: base, store: InMemorySigningShareStore(current: setup.signing[0]))
            let old = try await engine.backup(method: .password, secret: .text("old"))
            try await engine.addOrUpdateRecoveryMethod(.password, secret: .text("new"))

            let device = InMemorySigningShareStore(current: setup.signing[0])
            let error = await #expect(throws: ShareRecoveryError.self) {
                try await setup.engine(base: base, store: device)
                    .recover(method: .password, cipherText: old.base64, secret: .text("old"))
            }
            #expect(error?.code == .noMatchingShare, "\(String(describing: error))")
            #expect(await device.currentShare() == setup.signing[0])
            #expect(await device.stagedShare() == nil)
            #expect(
                await setup.backend.custodian.currentSigningShares(clientId: Self.userId).first?.setId
                    == setup.signing[1].setId)

            try await setup.engine(base: base, store: device).recover(method: .password, secret: .text("new"))
        }
    }

    @Test func deletingMethodsOverHTTP() async throws {
        let setup = try await Setup(seed: "http delete")
        try await TestServer.with {
            setup.backend.register(on: $0)
        } _: { base in
            setup.backend.started(base: base)
            let engine = setup.engine(base: base, store: InMemorySigningShareStore(current: setup.signing[0]))
            try await engine.backup(method: .password, secret: .text("pw"))
            try await engine.backup(method: .recoveryCode, secret: .text("ABCD-EFGH"))
            try await engine.deleteRecoveryMethod(.recoveryCode)
            #expect(try await engine.activatedRecoveryMethods() == [.password])
            #expect(await setup.backend.integrator.fetchBackupShares(clientId: Self.userId).count == 1)
            // Deleting what is already gone is not an error for the store.
            let store = HTTPCipherTextStore(baseURL: base, tokenProvider: { $0.rawValue }, transport: testTransport())
            try await store.deleteCipherText(userId: Self.userId, method: .recoveryCode)
            #expect(setup.purposes.all.contains(.deleteRecovery))
        }
    }

    @Test func wrongWebhookSecretIsRejected() async throws {
        let setup = try await Setup(seed: "http webhook")
        try await TestServer.with {
            setup.backend.register(on: $0)
        } _: { base in
            let secret = SecureBytes(copying: Array("not-the-secret".utf8))
            let source = HTTPCustodianShareSource(
                webhookBaseURL: base + "/webhook", webhookSecret: secret, transport: testTransport())
            let error = await #expect(throws: TransportError.self) {
                try await source.fetchBackupShares(clientId: Self.userId)
            }
            #expect(error?.code == .unauthorized)
            #expect(error?.reason.contains("HTTP 401") == true)
            let sink = HTTPCustodianBackupSink(
                webhookBaseURL: base + "/webhook", webhookSecret: secret, transport: testTransport())
            await #expect(throws: TransportError(.unauthorized, "")) {
                try await sink.deleteBackupShares(clientId: Self.userId, method: .password)
            }
        }
    }

    @Test func unknownSessionsAreNotFoundLocally() async throws {
        let custodian = HTTPCustodian(
            baseURL: "http://127.0.0.1:9", tokenProvider: { _ in "t" }, transport: testTransport())
        await #expect(throws: ShareRecoveryError(.notFound, "")) { try await custodian.confirmSession(id: "nope") }
        await custodian.abortSession(id: "nope")
    }
}
