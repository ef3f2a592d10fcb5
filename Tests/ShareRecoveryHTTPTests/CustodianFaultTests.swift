import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import TestSupport
import Testing

/// Recovery over HTTP while the custodian misbehaves at one step of its session: every failure is a
/// typed error, the device's file store keeps its generation byte for byte (nothing staged, no
/// temporary files), and the custodian keeps the old signing set.
@Suite("Custodian faults during recovery")
struct CustodianFaultTests {
    static let userId = "user-faults"
    static let passcode = SecureBytes(copying: Array("482916".utf8))

    /// The custodian call that fails.
    enum Step: String, Sendable, CaseIterable {
        case open, finish, confirm

        /// Whether a request is this step's call (the session id is any path segment).
        func matches(_ request: Request) -> Bool {
            guard request.method == .post else { return false }
            let path = request.uri.path
            switch self {
            case .open: return path == "/recovery/sessions"
            case .finish: return path.hasPrefix("/recovery/sessions/") && path.hasSuffix("/finish")
            case .confirm: return path.hasPrefix("/recovery/sessions/") && path.hasSuffix("/confirm")
            }
        }
    }

    /// How it fails.
    enum Failure: String, Sendable, CaseIterable {
        /// `serverError` is a 503 (a lost answer, retried), `internalError` a 500 (not retried).
        case unreachable, slow, serverError, internalError, malformedJSON

        var code: String {
            switch self {
            case .unreachable, .serverError, .internalError: "transport.unavailable"
            case .slow: "transport.timedOut"
            case .malformedJSON: "engine.malformedInput"
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let step: Step
        let failure: Failure
        var testDescription: String { "\(failure) at \(step)" }
    }

    /// Unreachable is the whole custodian (only its first call can see it); a confirm's body is not
    /// read, so malformed JSON there is no failure.
    static let cases: [Case] =
        [Case(step: .open, failure: .unreachable)]
        + Step.allCases.flatMap { step in
            [Failure.slow, .serverError, .internalError].map { Case(step: step, failure: $0) }
        }
        + [Case(step: .open, failure: .malformedJSON), Case(step: .finish, failure: .malformedJSON)]

    /// Answers the failing step's requests badly, once armed, and passes everything else to the fake backend.
    struct FaultMiddleware: RouterMiddleware {
        typealias Context = BasicRequestContext
        let step: Step
        let failure: Failure
        let hits: HitCounter
        /// Off during the backup, whose session calls have the same paths.
        let armed: FaultSwitch

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws
            -> Response
        {
            guard armed.isOn, step.matches(request) else { return try await next(request, context) }
            hits.hit()
            switch failure {
            case .unreachable, .internalError:
                return TestServer.error(.internalServerError, code: "internal")
            case .serverError:
                return TestServer.error(.serviceUnavailable, code: "unavailable")
            case .slow:
                // Twice the recovery's deadline, and the call never reaches the custodian.
                try await Task.sleep(for: .seconds(4))
                return TestServer.error(.serviceUnavailable, code: "unavailable")
            case .malformedJSON:
                return TestServer.json("{\"sessionId\": \"s\", \"plan\": {,}")
            }
        }
    }

    /// Lets the first confirm through to the custodian, then loses its answer: a gateway answers 502
    /// for it, as when the connection to the custodian drops after the commit.
    struct LostConfirmAnswer: RouterMiddleware {
        typealias Context = BasicRequestContext
        let hits: HitCounter
        let armed: FaultSwitch

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
            async throws
            -> Response
        {
            guard armed.isOn, Step.confirm.matches(request) else { return try await next(request, context) }
            let response = try await next(request, context)
            return hits.hit() == 1 ? TestServer.error(.badGateway, code: "badGateway") : response
        }
    }

    @Test("A confirm whose answer is lost is sent again, lands on the confirmed session, and the recovery completes")
    func lostConfirmAnswer() async throws {
        let root = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let lost = LostConfirmAnswer(hits: HitCounter(), armed: FaultSwitch())
        try await Self.withBackedUpDevice(
            seed: "lost confirm answer", curve: .ed25519, root: root, middleware: lost, armed: lost.armed
        ) { setup in
            let engine = Self.engine(
                base: setup.base, custodianBase: setup.base, store: setup.device, random: setup.random)
            let log = StatusLog()
            let recovered = try await engine.recover(method: .cloudKey, secret: setup.cloudKey, progress: log.append)
            #expect(lost.hits.value == 2, "the lost confirm was sent once more")
            #expect(log.all == RecoveryStatus.sequence, "\(log.all)")
            // Device and custodian agree on the new set: the share the custodian committed to was kept.
            #expect(try await setup.device.currentShare() == recovered)
            #expect(try await setup.device.stagedShare() == nil)
            let custodianShares = await setup.backend.custodian.currentSigningShares(clientId: Self.userId)
            #expect(custodianShares.count == 1 && custodianShares.allSatisfy { $0.isSameSet(as: recovered) })
            #expect(recovered.generation == setup.signing[0].generation + 1)
        }
    }

    /// What a fault test starts from, on a running fake backend: party 1 of a fresh 2-of-2 wallet in a
    /// device store under `root`, party 2 with the custodian, and a cloud-key backup of party 1.
    struct Setup {
        let base: String
        let backend: FakeBackend
        let device: FileSigningShareStore
        let signing: [ShareRecord]
        let cloudKey: BackupSecret
        let random: DeterministicRandom
    }

    /// Runs `body` on a backed-up device with `middleware` in front of the fake backend, armed only once
    /// the backup is done (the backup's session calls have the recovery's paths).
    @discardableResult
    static func withBackedUpDevice<Middleware: RouterMiddleware, R: Sendable>(
        seed: String, curve: Curve, root: String, middleware: Middleware, armed: FaultSwitch,
        _ body: (Setup) async throws -> R
    ) async throws -> R where Middleware.Context == BasicRequestContext {
        let random = DeterministicRandom(seed: Array("custodian fault \(seed)".utf8))
        let signing = try KeyGeneration.generate(curve: curve, walletId: "w-faults", using: random)
        let backend = FakeBackend(custodianKey: SealingKeyPair(using: random), random: random)
        await backend.custodian.register(signingShares: [signing[1]], clientId: Self.userId)
        let cloudKey = BackupSecret.keyMaterial(random.secureBytes(count: 32))
        return try await TestServer.with { router in
            router.add(middleware: middleware)
            backend.register(on: router)
        } _: { base in
            backend.started(base: base)
            let device = try FileSigningShareStore(directory: root + "/device", argon2: .minimum)
            try await device.createPasscode(Self.passcode, confirmation: Self.passcode)
            try await device.stage(signing[0])
            try await device.promoteStaged()
            let backupEngine = Self.engine(
                base: base, custodianBase: base, store: device, random: random, timeout: .seconds(10))
            try await backupEngine.backup(method: .cloudKey, secret: cloudKey)
            armed.turnOn()
            return try await body(
                Setup(
                    base: base, backend: backend, device: device, signing: signing, cloudKey: cloudKey, random: random))
        }
    }

    static func makeDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/custodian-faults-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test(arguments: cases)
    func failedRecoveryChangesNothing(_ testCase: Case) async throws {
        let root = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hits = HitCounter()
        let fault = FaultMiddleware(step: testCase.step, failure: testCase.failure, hits: hits, armed: FaultSwitch())
        let original = try await Self.withBackedUpDevice(
            seed: testCase.testDescription, curve: .secp256k1, root: root, middleware: fault, armed: fault.armed
        ) { setup in
            let (base, backend, device, signing, cloudKey, random) =
                (setup.base, setup.backend, setup.device, setup.signing, setup.cloudKey, setup.random)
            let currentBytes = try Data(contentsOf: URL(fileURLWithPath: root + "/device/current.share"))
            let custodianBefore = await backend.custodian.currentSigningShares(clientId: Self.userId)
            // An unreachable custodian: a port that was just bound and closed.
            var custodianBase = base
            if testCase.failure == .unreachable {
                let closed = try TruncatingServer()
                custodianBase = "http://127.0.0.1:\(closed.port)"
                closed.stop()
            }
            let engine = Self.engine(base: base, custodianBase: custodianBase, store: device, random: random)
            let log = StatusLog()
            let error = await #expect(throws: (any Error).self) {
                try await engine.recover(method: .cloudKey, secret: cloudKey, progress: log.append)
            }
            #expect(errorName(error) == testCase.failure.code, "\(String(describing: error))")
            if testCase.failure == .slow {
                #expect(errorReason(error).contains("timed out"), "\(String(describing: error))")
            }
            if testCase.failure == .serverError { #expect(hits.value == 3, "a 503 is retried up to the attempt limit") }
            if testCase.failure == .internalError { #expect(hits.value == 1, "a 500 is not retried") }
            #expect(!log.all.contains(.done))
            if testCase.step != .confirm { #expect(!log.all.contains(.storingShare), "\(log.all)") }

            // Nothing stored changed: the same file bytes, nothing staged, no temporary files, and a
            // reopened store still opens with the passcode at the old generation.
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/device/current.share")) == currentBytes)
            let names = try FileManager.default.contentsOfDirectory(atPath: root + "/device").sorted()
            if testCase.failure == .unreachable {
                // The custodian could not even be asked to abandon the session: its id stays on record,
                // and the next start (here, with the custodian back) settles it.
                #expect(names == ["current.share", "header", "lock", "pending.session"], "\(names)")
                let reachable = Self.engine(base: base, custodianBase: base, store: device, random: random)
                #expect(try await reachable.resumeInterruptedOperation() == .rolledBack(.recovery))
            }
            let settled = try FileManager.default.contentsOfDirectory(atPath: root + "/device").sorted()
            #expect(settled == ["current.share", "header", "lock"], "\(settled)")
            #expect(try await device.stagedShare() == nil)
            #expect(await backend.custodian.currentSigningShares(clientId: Self.userId) == custodianBefore)
            #expect(custodianBefore == [signing[1]])
            return signing[0]
        }
        let reopened = try FileSigningShareStore(directory: root + "/device", argon2: .minimum)
        try await reopened.authenticate(Self.passcode)
        #expect(try await reopened.currentShare() == original)
    }

    /// An engine over the fake backend. The 2 s deadline of a recovery is far below the slow fault's
    /// 4 s and far above a step's time on a loaded machine; the setup's backup takes 10 s.
    static func engine(
        base: String, custodianBase: String, store: any SigningShareStore, random: DeterministicRandom,
        timeout: Duration = .seconds(2)
    ) -> RecoveryEngine {
        let tokens: TokenProvider = { $0.rawValue }
        let transport = testTransport(timeout: timeout)
        return RecoveryEngine(
            configuration: .init(
                userId: userId,
                custodian: HTTPCustodian(
                    baseURL: custodianBase, tokenProvider: tokens, transport: transport, random: random),
                shareStore: store,
                cipherTextSource: HTTPCipherTextSource(baseURL: base, tokenProvider: tokens, transport: transport),
                cipherTextStore: HTTPCipherTextStore(baseURL: base, tokenProvider: tokens, transport: transport),
                custodianBackupSink: HTTPCustodianBackupSink(
                    webhookBaseURL: base + "/webhook",
                    webhookSecret: SecureBytes(copying: Array(FakeBackend.webhookSecret.utf8)),
                    transport: transport),
                argon2: .minimum, random: random))
    }
}

/// A flag the test flips once its setup is done.
final class FaultSwitch: Sendable {
    private let on = Locked(false)
    func turnOn() { on.withLock { $0 = true } }
    var isOn: Bool { on.withLock { $0 } }
}
