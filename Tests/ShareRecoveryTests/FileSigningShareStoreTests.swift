#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery

/// FileSigningShareStore: passcodes, attempt limits, generations, and faults on every write step.
@Suite("File signing share store")
struct FileSigningShareStoreTests {
    typealias Support = StoreTestSupport
    static let pin = Support.passcode("1234")

    /// A store with a 4-digit passcode and, if asked, generation 0 current.
    static func makeStore(
        _ label: String, clock: any PasscodeClock = SystemPasscodeClock(), withShare: Bool = true
    ) async throws -> (FileSigningShareStore, String) {
        let directory = Support.makeDirectory(label)
        let store = try await Support.open(directory, clock: clock)
        try await store.createPasscode(pin, confirmation: pin)
        if withShare {
            try await store.stage(try Support.share(generation: 0))
            try await store.promoteStaged()
        }
        return (store, directory)
    }

    // MARK: Passcode rules

    struct RuleCase: Sendable, CustomStringConvertible {
        let bytes: [UInt8]
        let kind: PasscodeKind?
        let label: String
        init(_ text: String, _ kind: PasscodeKind?) {
            bytes = Array(text.utf8)
            self.kind = kind
            label = text.debugDescription
        }
        init(bytes: [UInt8], _ kind: PasscodeKind?, _ label: String) {
            self.bytes = bytes
            self.kind = kind
            self.label = label
        }
        var description: String { label }
    }

    static let ruleCases: [RuleCase] = [
        RuleCase("1234", .fourDigits), RuleCase("000000", .sixDigits), RuleCase("1234567", .alphanumeric),
        RuleCase("12345678901", .alphanumeric), RuleCase("abc123", .alphanumeric), RuleCase("pässwörd", .alphanumeric),
        RuleCase("correct horse", .alphanumeric), RuleCase("🔑🔑🔑🔑🔑🔑", .alphanumeric),
        RuleCase("", nil), RuleCase("1", nil), RuleCase("123", nil), RuleCase("12345", nil), RuleCase("abc12", nil),
        RuleCase("12 34", nil), RuleCase("abc\u{07}def", nil), RuleCase("abcdef\n", nil),
        RuleCase(String(repeating: "a", count: 129), nil), RuleCase(String(repeating: "a", count: 128), .alphanumeric),
        RuleCase(bytes: [0x61, 0x62, 0x63, 0x64, 0x65, 0xFF], nil, "invalid UTF-8"),
        RuleCase(bytes: [0x61, 0x62, 0x63, 0x64, 0x65, 0xC3], nil, "truncated UTF-8"),
    ]

    @Test("Passcode rules", arguments: ruleCases)
    func passcodeRules(_ rule: RuleCase) async throws {
        let passcode = SecureBytes(copying: rule.bytes)
        if let kind = rule.kind {
            #expect(try PasscodeKind(validating: passcode) == kind)
        } else {
            let error = await Support.expectError(.invalidPasscode) { _ = try PasscodeKind(validating: passcode) }
            if rule.bytes.count >= 3 {
                #expect(!(error?.reason.contains(String(decoding: rule.bytes, as: UTF8.self)) ?? true))
            }
        }
    }

    @Test func attemptDelayPolicy() {
        #expect((0...2).allSatisfy { PasscodeAttemptPolicy.delay(afterFailures: $0) == .zero })
        #expect(PasscodeAttemptPolicy.delay(afterFailures: 3) == .seconds(1))
        #expect(PasscodeAttemptPolicy.delay(afterFailures: 4) == .seconds(2))
        #expect(PasscodeAttemptPolicy.delay(afterFailures: 9) == .seconds(64))
    }

    // MARK: Passcode lifecycle

    @Test func createAuthenticateChangeRemove() async throws {
        let directory = Support.makeDirectory("lifecycle")
        defer { Support.removeDirectory(directory) }
        do {
            let store = try await Support.open(directory)
            #expect(await !store.isPasscodeSet)
            #expect(await store.passcodeKind == nil)
            await Support.expectError(.passcodeNotSet) { try await store.authenticate(Self.pin) }
            try await store.createPasscode(Self.pin, confirmation: Self.pin)
            #expect(await store.isPasscodeSet)
            #expect(await store.isAuthenticated)
            #expect(await store.passcodeKind == .fourDigits)
            await Support.expectError(.passcodeAlreadySet) {
                try await store.createPasscode(Self.pin, confirmation: Self.pin)
            }
            try await store.stage(try Support.share(generation: 7))
            try await store.promoteStaged()
        }
        let shareFile = try Data(contentsOf: URL(fileURLWithPath: directory + "/current.share"))
        do {
            // A new object starts locked; the passcode opens it.
            let store = try await Support.open(directory)
            #expect(await store.isPasscodeSet)
            #expect(await !store.isAuthenticated)
            await Support.expectError(.notAuthenticated) { _ = try await store.currentShare() }
            try await store.authenticate(Self.pin)
            #expect(try await store.currentShare()?.generation == 7)

            // 4 digits → alphanumeric; only the header changes.
            let word = Support.passcode("new passcode 1")
            await Support.expectError(.passcodeMismatch) {
                try await store.changePasscode(
                    old: Self.pin, new: word, confirmation: Support.passcode("new passcode 2"))
            }
            #expect(await store.failedAttempts == 0, "a mismatch costs no attempt")
            await Support.expectError(.wrongPasscode) {
                try await store.changePasscode(old: Support.passcode("9999"), new: word, confirmation: word)
            }
            #expect(await store.failedAttempts == 1)
            try await store.changePasscode(old: Self.pin, new: word, confirmation: word)
            #expect(await store.passcodeKind == .alphanumeric)
            #expect(await store.failedAttempts == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/current.share")) == shareFile)
        }
        do {
            let store = try await Support.open(directory)
            await Support.expectError(.wrongPasscode) { try await store.authenticate(Self.pin) }
            try await store.authenticate(Support.passcode("new passcode 1"))
            #expect(try await store.currentShare()?.generation == 7)
            await store.lock()
            await Support.expectError(.notAuthenticated) { _ = try await store.stagedShare() }

            try await store.remove()
            #expect(await !store.isPasscodeSet)
            #expect(await !store.isAuthenticated)
            #expect(Support.names(in: directory) == ["lock"])
            await Support.expectError(.notAuthenticated) { _ = try await store.currentShare() }
            // A removed store takes a new passcode of any kind.
            let six = Support.passcode("654321")
            try await store.createPasscode(six, confirmation: six)
            #expect(await store.passcodeKind == .sixDigits)
            #expect(try await store.currentShare() == nil)
        }
    }

    @Test func mismatchedOrInvalidFirstPasscodeSetsNothing() async throws {
        let directory = Support.makeDirectory("mismatch")
        defer { Support.removeDirectory(directory) }
        let store = try await Support.open(directory)
        await Support.expectError(.passcodeMismatch) {
            try await store.createPasscode(Self.pin, confirmation: Support.passcode("1235"))
        }
        await Support.expectError(.invalidPasscode) {
            try await store.createPasscode(Support.passcode("12345"), confirmation: Support.passcode("12345"))
        }
        #expect(await !store.isPasscodeSet)
        #expect(Support.names(in: directory) == ["lock"])
    }

    @Test func shareAccessNeedsAuthentication() async throws {
        let directory = Support.makeDirectory("unauthenticated")
        defer { Support.removeDirectory(directory) }
        let store = try await Support.open(directory)
        let share = try Support.share(generation: 1)
        // No passcode yet, then a passcode but a fresh, locked object.
        for round in 0..<2 {
            if round == 1 {
                try await store.createPasscode(Self.pin, confirmation: Self.pin)
                await store.lock()
            }
            await Support.expectError(.notAuthenticated) { _ = try await store.currentShare() }
            await Support.expectError(.notAuthenticated) { _ = try await store.stagedShare() }
            await Support.expectError(.notAuthenticated) { try await store.stage(share) }
            await Support.expectError(.notAuthenticated) { try await store.promoteStaged() }
            await Support.expectError(.notAuthenticated) { try await store.discardStaged() }
        }
    }

    // MARK: Attempts

    @Test func wrongPasscodesCountAndDelayGrows() async throws {
        let clock = StoreTestClock()
        let (store, directory) = try await Self.makeStore("delay", clock: clock)
        defer { Support.removeDirectory(directory) }
        let wrong = Support.passcode("0000")
        await store.lock()
        for expectedRemaining in [9, 8, 7] {
            let error = await Support.expectError(.wrongPasscode) { try await store.authenticate(wrong) }
            #expect(error?.reason.contains("\(expectedRemaining) attempts remaining") == true)
            #expect(error?.reason.contains("0000") == false)
        }
        #expect(await store.failedAttempts == 3)
        #expect(await store.remainingAttempts == 7)
        // After 3 failures: 1 s, then 2 s, 4 s... Early attempts are neither checked nor counted.
        for (failures, wait) in [(3, 1), (4, 2), (5, 4), (6, 8)] {
            #expect(await store.delayBeforeNextAttempt() == .seconds(wait))
            await Support.expectError(.attemptTooSoon) { try await store.authenticate(Self.pin) }
            clock.advance(by: .seconds(wait) - .milliseconds(1))
            await Support.expectError(.attemptTooSoon) { try await store.authenticate(Self.pin) }
            #expect(await store.failedAttempts == failures)
            clock.advance(by: .milliseconds(1))
            #expect(await store.delayBeforeNextAttempt() == .zero)
            await Support.expectError(.wrongPasscode) { try await store.authenticate(wrong) }
        }
        #expect(await store.failedAttempts == 7)
        // A clock turned back does not shorten the wait.
        clock.advance(by: .seconds(-3600))
        await Support.expectError(.attemptTooSoon) { try await store.authenticate(Self.pin) }
        clock.advance(by: .seconds(3600 + 16))
        try await store.authenticate(Self.pin)
        #expect(await store.failedAttempts == 0)
        #expect(await store.delayBeforeNextAttempt() == .zero)
        #expect(try await store.currentShare()?.generation == 0)
    }

    @Test func lockoutSurvivesReopening() async throws {
        let clock = StoreTestClock()
        let directory: String
        do {
            let (store, made) = try await Self.makeStore("lockout", clock: clock)
            directory = made
            for attempt in 1...PasscodeAttemptPolicy.maximumFailures {
                clock.advance(by: .seconds(1000))
                let code: ShareRecoveryError.Code =
                    attempt < PasscodeAttemptPolicy.maximumFailures ? .wrongPasscode : .lockedOut
                await Support.expectError(code) { try await store.authenticate(Support.passcode("4321")) }
            }
            #expect(await store.isLockedOut)
            #expect(await !store.isAuthenticated)
            await Support.expectError(.lockedOut) { _ = try await store.currentShare() }
        }
        defer { Support.removeDirectory(directory) }
        do {
            clock.advance(by: .seconds(86_400 * 365))
            let store = try await Support.open(directory, clock: clock)
            #expect(await store.isLockedOut)
            #expect(await store.remainingAttempts == 0)
            await Support.expectError(.lockedOut) { try await store.authenticate(Self.pin) }
            await Support.expectError(.lockedOut) {
                try await store.changePasscode(old: Self.pin, new: Self.pin, confirmation: Self.pin)
            }
            await Support.expectError(.lockedOut) { _ = try await store.currentShare() }
            // Only removal is left.
            try await store.remove()
            try await store.createPasscode(Self.pin, confirmation: Self.pin)
            #expect(await !store.isLockedOut)
            #expect(await store.failedAttempts == 0)
        }
    }

    @Test func attemptCountedEvenWhenTheResetIsLost() async throws {
        // The count is written before the check: if the reset after a right passcode fails, the
        // attempt stays counted and the caller gets a storage error, not access.
        let script = StoreFaultScript()
        let directory = Support.makeDirectory("reset")
        defer { Support.removeDirectory(directory) }
        let store = try await Support.open(directory, faultHook: script.hook)
        try await store.createPasscode(Self.pin, confirmation: Self.pin)
        await store.lock()
        // Steps of one header write: create, write, fsync, rename, fsync directory. The 6th is the reset.
        script.arm(faultAt: 6, fault: .fail(ENOSPC))
        await Support.expectError(.storageFailure) { try await store.authenticate(Self.pin) }
        script.disarm()
        #expect(await !store.isAuthenticated)
        #expect(await store.failedAttempts == 1)
        // And if the count itself cannot be written, nothing is checked.
        script.arm(faultAt: 1, fault: .fail(ENOSPC))
        await Support.expectError(.storageFailure) { try await store.authenticate(Self.pin) }
        script.disarm()
        #expect(await store.failedAttempts == 1)
        try await store.authenticate(Self.pin)
        #expect(await store.failedAttempts == 0)
    }

    // MARK: Generations

    @Test func stagePromoteDiscard() async throws {
        let (store, directory) = try await Self.makeStore("generations")
        defer { Support.removeDirectory(directory) }
        #expect(try await store.currentShare()?.generation == 0)
        #expect(try await store.stagedShare() == nil)
        await Support.expectError(.storageFailure) { try await store.promoteStaged() }

        let first = try Support.share(generation: 1)
        try await store.stage(first)
        #expect(try await store.stagedShare() == first)
        #expect(try await store.currentShare()?.generation == 0, "staging keeps the current generation")
        try await store.promoteStaged()
        #expect(try await store.currentShare() == first)
        #expect(try await store.stagedShare() == nil)

        try await store.stage(try Support.share(generation: 2))
        try await store.discardStaged()
        try await store.discardStaged()
        #expect(try await store.stagedShare() == nil)
        #expect(try await store.currentShare() == first)

        // Restaging replaces; only signing shares with a secret are stored.
        try await store.stage(try Support.share(generation: 2))
        let ed = try Support.share(generation: 3, curve: .ed25519)
        try await store.stage(ed)
        #expect(try await store.stagedShare() == ed)
        await Support.expectError(.invalidParameters) { try await store.stage(first.publicDescription) }
        let backup = try ShareRecord(
            walletId: first.walletId, curve: first.curve, kind: .backup, threshold: 2, parties: 2, partyIndex: 1,
            generation: 4, setId: .random(), secret: first.secret, commitments: first.commitments)
        await Support.expectError(.invalidParameters) { try await store.stage(backup) }
        #expect(Support.names(in: directory) == ["current.share", "header", "lock", "staged.share"])
    }

    @Test func stagedAndCurrentSurviveReopening() async throws {
        let directory: String
        let staged = try Support.share(generation: 1)
        do {
            let (store, made) = try await Self.makeStore("reopen")
            directory = made
            try await store.stage(staged)
        }
        defer { Support.removeDirectory(directory) }
        let store = try await Support.open(directory)
        try await store.authenticate(Self.pin)
        #expect(try await store.currentShare()?.generation == 0)
        #expect(try await store.stagedShare() == staged)
    }

    @Test func oneStoreObjectPerDirectory() async throws {
        let (store, directory) = try await Self.makeStore("exclusive")
        defer { Support.removeDirectory(directory) }
        let error = await Support.expectError(.operationInProgress) {
            _ = try FileSigningShareStore(directory: directory)
        }
        #expect(error?.reason.contains("in use") == true)
        _ = store
    }

    // MARK: Faults

    /// Every mutating step of stage + promote, failed in turn: the old generation stays current
    /// unless the promotion's rename already happened; the store stays usable either way.
    @Test(arguments: [StoreFault.fail(EIO), .fail(ENOSPC)])
    func faultOnEveryWriteStepKeepsTheOldGeneration(_ fault: StoreFault) async throws {
        var index = 1
        var faultedSteps: [String] = []
        while true {
            let script = StoreFaultScript()
            let directory = Support.makeDirectory("fault")
            defer { Support.removeDirectory(directory) }
            var promoting = false
            do {
                let store = try await Support.open(directory, faultHook: script.hook)
                try await store.createPasscode(Self.pin, confirmation: Self.pin)
                try await store.stage(try Support.share(generation: 0))
                try await store.promoteStaged()
                script.arm(faultAt: index, fault: fault)
                do throws(ShareRecoveryError) {
                    try await store.stage(try Support.share(generation: 1))
                    promoting = true
                    try await store.promoteStaged()
                } catch {
                    #expect(error.code == .storageFailure, "step \(index)")
                    if case .fail(let code) = fault {
                        #expect(error.reason.contains(String(cString: strerror(code))), "\(error)")
                    }
                }
                script.disarm()
            }
            guard let step = script.faultedStep else { break }  // every step has had its fault
            faultedSteps.append(step.description)
            let store = try await Support.open(directory)
            try await store.authenticate(Self.pin)
            let current = try #require(try await store.currentShare())
            let renamed = promoting && step == .fsyncDirectory
            #expect(current.generation == (renamed ? 1 : 0), "fault at \(step)")
            if !promoting, step != .fsyncDirectory {
                #expect(
                    try await store.stagedShare() == nil, "a stage that failed before its rename leaves nothing staged")
            }
            #expect(Support.names(in: directory).allSatisfy { !$0.hasPrefix(".tmp.") }, "fault at \(step)")
            try await store.stage(try Support.share(generation: 2))
            try await store.promoteStaged()
            #expect(try await store.currentShare()?.generation == 2)
            index += 1
        }
        #expect(
            faultedSteps.map { $0.components(separatedBy: " .tmp.").first! } == [
                "create", "write", "fsync", "rename", "fsync directory", "rename staged.share to current.share",
                "fsync directory",
            ])
    }

    @Test func faultWhileChangingThePasscodeKeepsTheOldOne() async throws {
        let script = StoreFaultScript()
        let directory = Support.makeDirectory("change-fault")
        defer { Support.removeDirectory(directory) }
        let word = Support.passcode("alphanumeric")
        do {
            let store = try await Support.open(directory, faultHook: script.hook)
            try await store.createPasscode(Self.pin, confirmation: Self.pin)
            // Steps 1–5 count the attempt; 6–10 write the new header. Fail the new header's rename.
            script.arm(faultAt: 9, fault: .fail(ENOSPC))
            await Support.expectError(.storageFailure) {
                try await store.changePasscode(old: Self.pin, new: word, confirmation: word)
            }
            #expect(script.faultedStep.map { if case .rename = $0 { true } else { false } } == true)
            script.disarm()
        }
        let store = try await Support.open(directory)
        await Support.expectError(.wrongPasscode) { try await store.authenticate(word) }
        try await store.authenticate(Self.pin)
        #expect(await store.passcodeKind == .fourDigits)
    }

    @Test func interruptedAndShortWritesStillWriteWholeFiles() async throws {
        // Every other call is interrupted (EINTR), and every write moves a single byte.
        let calls = StoreCallCounter()
        let hook: StoreFaultHook = { step in
            if calls.next() % 2 == 1 { return .interrupt }
            if case .write = step { return .shortWrite }
            return nil
        }
        let directory = Support.makeDirectory("eintr")
        defer { Support.removeDirectory(directory) }
        let share = try Support.share(generation: 5)
        do {
            let store = try await Support.open(directory, faultHook: hook)
            try await store.createPasscode(Self.pin, confirmation: Self.pin)
            try await store.stage(share)
            try await store.promoteStaged()
        }
        #expect(calls.count > 2 * 150, "each byte was its own write")
        let store = try await Support.open(directory)
        try await store.authenticate(Self.pin)
        #expect(try await store.currentShare() == share)
    }

    // MARK: Damage and leftovers

    @Test func openRemovesTemporaryFilesAndFinishesARemoval() async throws {
        let directory: String
        do {
            let (store, made) = try await Self.makeStore("leftovers")
            directory = made
            try await store.stage(try Support.share(generation: 1))
        }
        defer { Support.removeDirectory(directory) }
        for name in [".tmp.staged.share.0011223344556677", ".tmp.header.8899aabbccddeeff"] {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data([1, 2, 3])))
        }
        do {
            let reopened = try await Support.open(directory)
            #expect(Support.names(in: directory) == ["current.share", "header", "lock", "staged.share"])
            try await reopened.authenticate(Self.pin)
            #expect(try await reopened.stagedShare()?.generation == 1)
        }
        // A removal cut short after the header went: the share files cannot be read, so they go too.
        try FileManager.default.removeItem(atPath: directory + "/header")
        let reopened = try await Support.open(directory)
        #expect(await !reopened.isPasscodeSet)
        #expect(Support.names(in: directory) == ["lock"])
    }

    @Test func damagedFilesAreStoreCorrupted() async throws {
        let directory: String
        do {
            let (store, made) = try await Self.makeStore("damage")
            directory = made
            try await damageShareFiles(store, directory)
        }
        defer { Support.removeDirectory(directory) }

        // A damaged header: the store still opens, so that it can be removed.
        var header = try Data(contentsOf: URL(fileURLWithPath: directory + "/header"))
        header[0] ^= 0xFF
        try header.write(to: URL(fileURLWithPath: directory + "/header"))
        let reopened = try await Support.open(directory)
        #expect(await reopened.isPasscodeSet)
        await Support.expectError(.storeCorrupted) { try await reopened.authenticate(Self.pin) }
        await Support.expectError(.storeCorrupted) { _ = try await reopened.currentShare() }
        try await reopened.remove()
        #expect(await !reopened.isPasscodeSet)
    }

    func damageShareFiles(_ store: FileSigningShareStore, _ directory: String) async throws {
        let path = directory + "/current.share"
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        for offset in [0, 6, 20, original.count - 1] {
            var damaged = original
            damaged[offset] ^= 0x01
            try damaged.write(to: URL(fileURLWithPath: path))
            await Support.expectError(.storeCorrupted) { _ = try await store.currentShare() }
        }
        try original.prefix(40).write(to: URL(fileURLWithPath: path))
        await Support.expectError(.storeCorrupted) { _ = try await store.currentShare() }
        // A damaged staged file is never promoted.
        try await store.stage(try Support.share(generation: 1))
        try Data(original).write(to: URL(fileURLWithPath: path))
        var staged = try Data(contentsOf: URL(fileURLWithPath: directory + "/staged.share"))
        staged[50] ^= 0x80
        try staged.write(to: URL(fileURLWithPath: directory + "/staged.share"))
        await Support.expectError(.storeCorrupted) { try await store.promoteStaged() }
        #expect(try await store.currentShare()?.generation == 0)
    }

    @Test func tamperedHeaderFieldsDoNotUnlock() async throws {
        // The kind and Argon2id parameters are bound into the key wrap.
        let directory = try await Self.makeStore("header-aad").1
        defer { Support.removeDirectory(directory) }
        let path = directory + "/header"
        var header = try Data(contentsOf: URL(fileURLWithPath: path))
        header[6] = PasscodeKind.sixDigits.rawValue
        try header.write(to: URL(fileURLWithPath: path))
        let reopened = try await Support.open(directory)
        await Support.expectError(.wrongPasscode) { try await reopened.authenticate(Self.pin) }
    }
}
