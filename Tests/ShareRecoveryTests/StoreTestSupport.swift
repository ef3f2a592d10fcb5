#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery

/// Helpers shared by the store suites (FileSigningShareStoreTests, StoreCrashTests).
enum StoreTestSupport {
    /// A passcode's bytes.
    static func passcode(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    /// A fresh empty directory under the system temporary directory; the store directory lives inside it.
    static func makeDirectory(_ label: String) -> String {
        var template = Array("\(NSTemporaryDirectory())/share-store-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/store"
    }

    /// Removes a directory made by ``makeDirectory(_:)``.
    static func removeDirectory(_ storeDirectory: String) {
        try? FileManager.default.removeItem(atPath: (storeDirectory as NSString).deletingLastPathComponent)
    }

    /// The names in a store directory, sorted.
    static func names(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Party 1 of a deterministic 2-of-2 set at `generation`.
    static func share(generation: UInt32, curve: Curve = .secp256k1, seed: String = "store-tests")
        throws(ShareRecoveryError) -> ShareRecord
    {
        let base = try KeyGeneration.generate(
            curve: curve, walletId: "store-wallet", using: DeterministicRandom(seed: Array(seed.utf8)))[0]
        return try ShareRecord(
            walletId: base.walletId, curve: base.curve, kind: .signing, threshold: base.threshold,
            parties: base.parties,
            partyIndex: base.partyIndex, generation: generation, setId: .random(), secret: base.secret,
            commitments: base.commitments)
    }

    /// Expects `body` to throw a ``ShareRecoveryError`` with `code`, and returns it.
    @discardableResult
    static func expectError(
        _ code: ShareRecoveryError.Code, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async -> ShareRecoveryError? {
        do {
            try await body()
            Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as ShareRecoveryError {
            #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Opens a store, retrying while a just-released store object (or killed process) still holds the lock.
    static func open(
        _ directory: String, argon2: Argon2idParameters = .minimum, clock: any PasscodeClock = SystemPasscodeClock(),
        faultHook: StoreFaultHook? = nil
    ) async throws -> FileSigningShareStore {
        for _ in 0..<200 {
            // (A do/catch here crashes the 6.3.1 compiler in MandatoryAllocBoxToStack; Result does not.)
            let opened = Result { () throws(ShareRecoveryError) in
                try FileSigningShareStore(directory: directory, argon2: argon2, clock: clock, faultHook: faultHook)
            }
            if case .failure(let error) = opened, error.reason.contains("in use") {
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            return try opened.get()
        }
        return try FileSigningShareStore(directory: directory, argon2: argon2, clock: clock, faultHook: faultHook)
    }
}

/// A clock the test moves by hand.
final class StoreTestClock: PasscodeClock {
    private let now: Locked<Int64>

    init(millisecondsSince1970 start: Int64 = 1_750_000_000_000) { now = Locked(start) }

    func millisecondsSince1970() -> Int64 { now.withLock { $0 } }

    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        now.withLock { $0 += seconds * 1000 + attoseconds / 1_000_000_000_000_000 }
    }
}

/// Records every file-system step of a store and applies a fault to one of them.
final class StoreFaultScript: Sendable {
    private struct State {
        var armed = false
        var steps: [StoreIOStep] = []
        var faultAt: Int?
        var fault: StoreFault = .fail(EIO)
        var faulted: StoreIOStep?
    }

    private let state = Locked(State())

    /// The hook to hand to a store.
    var hook: StoreFaultHook { { [self] step in self.next(step) } }

    /// Starts counting steps from 1; the `index`th (if any) gets `fault`.
    func arm(faultAt index: Int?, fault: StoreFault = .fail(EIO)) {
        state.withLock { $0 = State(armed: true, steps: [], faultAt: index, fault: fault, faulted: nil) }
    }

    /// Stops counting and faulting.
    func disarm() { state.withLock { $0.armed = false } }

    /// The steps seen since ``arm(faultAt:fault:)``.
    var steps: [StoreIOStep] { state.withLock { $0.steps } }

    /// The step that got the fault, if any.
    var faultedStep: StoreIOStep? { state.withLock { $0.faulted } }

    private func next(_ step: StoreIOStep) -> StoreFault? {
        state.withLock { state in
            guard state.armed else { return nil }
            state.steps.append(step)
            guard state.steps.count == state.faultAt else { return nil }
            state.faulted = step
            return state.fault
        }
    }
}

/// A thread-safe call counter for hooks.
final class StoreCallCounter: Sendable {
    private let value = Locked(0)

    /// Counts a call and returns the new count.
    func next() -> Int {
        value.withLock { count in
            count += 1
            return count
        }
    }

    /// The calls so far.
    var count: Int { value.withLock { $0 } }
}
