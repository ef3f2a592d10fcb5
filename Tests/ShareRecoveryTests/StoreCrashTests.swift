#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery

/// Kills `share-store-harness` at random moments and checks what a fresh store object finds:
/// exactly the last confirmed or the next generation, fully valid, and a working passcode; and an
/// attempt counter that a kill never lowers.
@Suite("Store crash safety", .serialized)
struct StoreCrashTests {
    typealias Support = StoreTestSupport
    static let passcodeText = "crash-test passcode"
    /// 200; SHARE_RECOVERY_CRASH_TRIALS overrides (the sanitizer passes run fewer: the trials hunt
    /// timing windows, which the plain pass's 200 cover).
    static let trials = ProcessInfo.processInfo.environment["SHARE_RECOVERY_CRASH_TRIALS"].flatMap { Int($0) } ?? 200

    /// Mirrors HarnessWallet in the harness: party 1 of a deterministic 2-of-2 secp256k1 set.
    static let walletId = "share-store-harness"
    static let seed = Array("share-store-harness seed".utf8)

    /// A directory with the passcode file the harness reads.
    static func writePasscodeFile(in directory: String) throws -> String {
        let path = (directory as NSString).deletingLastPathComponent + "/passcode"
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(passcodeText.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    @Test(.timeLimit(.minutes(2)))
    func killedDuringStageAndPromoteShowsOldOrNewGeneration() async throws {
        let harness = try HarnessProcess.executablePath()
        let directory = Support.makeDirectory("crash")
        defer { Support.removeDirectory(directory) }
        let passcodeFile = try Self.writePasscodeFile(in: directory)
        let passcode = Support.passcode(Self.passcodeText)
        let first = try KeyGeneration.generate(
            curve: .secp256k1, walletId: Self.walletId, using: DeterministicRandom(seed: Self.seed))[0]
        do {
            // The cheapest Argon2id keeps 200 reopenings fast; the harness uses the header's parameters.
            let store = try await Support.open(directory, argon2: .minimum)
            try await store.createPasscode(passcode, confirmation: passcode)
            try await store.stage(first)
            try await store.promoteStaged()
        }

        var ended = (old: 0, new: 0), stagedLeft = 0, temporaryLeft = 0, promotions = 0
        for trial in 0..<Self.trials {
            let process = try HarnessProcess.launch(
                harness, ["promote-loop", "--store", directory, "--passcode-file", passcodeFile])
            let ready = process.readLine(timeout: .seconds(20))
            guard let ready, ready.hasPrefix("ready ") else {
                process.kill()
                Issue.record(
                    "trial \(trial): no ready line (\(String(describing: ready)), \(process.readRemainingLines()))")
                break
            }
            usleep(UInt32.random(in: 1_000...50_000))
            let status = process.kill()
            let lines = process.readRemainingLines()
            #expect(status == .signalled(SIGKILL), "trial \(trial): \(status) \(lines.suffix(3))")

            let startGeneration = try #require(UInt32(ready.dropFirst("ready ".count)))
            let confirmed =
                lines.last(where: { $0.hasPrefix("promoted ") }).flatMap { UInt32($0.dropFirst("promoted ".count)) }
                ?? startGeneration
            promotions += lines.count(where: { $0.hasPrefix("promoted ") })
            if Support.names(in: directory).contains(where: { $0.hasPrefix(".tmp.") }) { temporaryLeft += 1 }

            // A fresh object, as after a reboot: the passcode must work and the generation be whole.
            let store = try await Support.open(directory, argon2: .minimum)
            try await store.authenticate(passcode)
            #expect(await store.failedAttempts == 0)
            let current = try #require(try await store.currentShare(), "trial \(trial): no current generation")
            #expect(
                current.generation == confirmed || current.generation == confirmed + 1,
                "trial \(trial): generation \(current.generation), confirmed \(confirmed)")
            if current.generation == confirmed { ended.old += 1 } else { ended.new += 1 }
            // currentShare() already ran every §4 check; the record must also be the harness's wallet.
            #expect(current.walletId == Self.walletId && current.kind == .signing && current.partyIndex == 1)
            #expect(current.publicKey == first.publicKey && current.secret == first.secret)
            #expect(try Point(generatorTimes: try #require(current.secret)) == current.publicShare)
            if let staged = try await store.stagedShare() {
                stagedLeft += 1
                #expect(staged.generation == current.generation + 1, "trial \(trial): staged \(staged.generation)")
                #expect(staged.publicKey == first.publicKey)
            }
            #expect(Support.names(in: directory).allSatisfy { !$0.hasPrefix(".tmp.") })
        }
        print(
            "StoreCrashTests: \(Self.trials) trials; current was the last confirmed generation in \(ended.old), "
                + "the next in \(ended.new); staged file left in \(stagedLeft); temporary file left in "
                + "\(temporaryLeft); \(promotions) promotions confirmed in total")
        #expect(ended.old + ended.new == Self.trials)
    }

    @Test(.timeLimit(.minutes(1)))
    func attemptCountSurvivesACompletedRun() async throws {
        let harness = try HarnessProcess.executablePath()
        let directory = Support.makeDirectory("attempts")
        defer { Support.removeDirectory(directory) }
        let passcodeFile = try Self.writePasscodeFile(in: directory)
        do {
            let store = try await Support.open(directory, argon2: .minimum)
            let right = Support.passcode("2468")
            try await store.createPasscode(right, confirmation: right)
        }
        // The test clock starts before the harness runs, so the harness's last failure is never
        // already a full delay in the past when the store reopens: under ThreadSanitizer the
        // harness's exit alone took longer than the 1 s delay, and `attemptTooSoon` never came.
        let launched = SystemPasscodeClock().millisecondsSince1970()
        let process = try HarnessProcess.launch(
            harness, ["wrong-passcode", "--store", directory, "--passcode-file", passcodeFile, "--attempts", "3"])
        let lines = process.readRemainingLines()
        #expect(process.wait() == .exited(0))
        #expect(lines == ["ready 0", "failed 1", "failed 2", "failed 3"])

        let clock = StoreTestClock(millisecondsSince1970: launched)
        let store = try await Support.open(directory, clock: clock)
        #expect(await store.failedAttempts == 3)
        #expect(await store.remainingAttempts == 7)
        await Support.expectError(.attemptTooSoon) { try await store.authenticate(Support.passcode("2468")) }
        // Past the last failure (at most now) by more than the delay.
        let harnessRun = SystemPasscodeClock().millisecondsSince1970() - launched
        clock.advance(by: .milliseconds(harnessRun) + PasscodeAttemptPolicy.delay(afterFailures: 3) + .seconds(1))
        try await store.authenticate(Support.passcode("2468"))
        #expect(await store.failedAttempts == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func killingAGuessingProcessNeverRefundsAttempts() async throws {
        let harness = try HarnessProcess.executablePath()
        var lockedOut = 0
        for trial in 0..<20 {
            let directory = Support.makeDirectory("guessing")
            defer { Support.removeDirectory(directory) }
            let passcodeFile = try Self.writePasscodeFile(in: directory)
            let right = Support.passcode("135790")
            do {
                let store = try await Support.open(directory, argon2: .minimum)
                try await store.createPasscode(right, confirmation: right)
            }
            let process = try HarnessProcess.launch(
                harness, ["wrong-passcode", "--store", directory, "--passcode-file", passcodeFile, "--skip-clock"])
            guard process.readLine(timeout: .seconds(20)) == "ready 0" else {
                process.kill()
                Issue.record("trial \(trial): no ready line")
                break
            }
            let lines: [String]
            if trial == 19 {
                // The last run is not killed: it guesses until the lockout and exits by itself.
                lines = process.readRemainingLines()
                #expect(process.wait() == .exited(0))
                #expect(lines.last == "locked \(PasscodeAttemptPolicy.maximumFailures)", "\(lines)")
            } else {
                usleep(UInt32.random(in: 0...(trial < 10 ? 2_000 : 20_000)))
                process.kill()
                lines = process.readRemainingLines()
            }
            let reported = lines.compactMap { line in line.split(separator: " ").last.flatMap { Int($0) } }.last ?? 0

            // The harness's clock ran days ahead; this one runs a year ahead so no delay is pending.
            let clock = StoreTestClock(
                millisecondsSince1970: SystemPasscodeClock().millisecondsSince1970() + 365 * 86_400_000)
            let store = try await Support.open(directory, clock: clock)
            let failures = await store.failedAttempts
            #expect(
                failures >= reported && failures <= reported + 1,
                "trial \(trial): \(failures) on disk, \(reported) reported")
            if failures >= PasscodeAttemptPolicy.maximumFailures {
                lockedOut += 1
                await Support.expectError(.lockedOut) { try await store.authenticate(right) }
            } else {
                try await store.authenticate(right)
            }
        }
        print("StoreCrashTests: 20 guessing runs (19 killed at random); \(lockedOut) reached the lockout")
    }
}

/// A child process with its stdout on a pipe (posix_spawn; no Foundation run loop).
final class HarnessProcess {
    enum Status: Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        var description: String {
            switch self {
            case .exited(let code): "exited \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    private var status: Status?

    private init(pid: pid_t, output: Int32) {
        self.pid = pid
        self.output = output
    }

    deinit {
        if status == nil { _ = kill() }
        close(output)
    }

    /// The built `share-store-harness`: `SHARE_STORE_HARNESS`, else beside the test bundle (the
    /// products directory), else under the package's `.build`.
    static func executablePath() throws -> String {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment["SHARE_STORE_HARNESS"] { candidates.append(path) }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(
                URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(
                    "share-store-harness"
                ).path)
        }
        for bundle in [Bundle.main] + Bundle.allBundles {
            candidates.append(bundle.bundleURL.appendingPathComponent("share-store-harness").path)
            candidates.append(
                bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("share-store-harness").path)
        }
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            for configuration in ["debug", "release"] {
                candidates.append(directory.appendingPathComponent(".build/\(configuration)/share-store-harness").path)
            }
            directory.deleteLastPathComponent()
        }
        guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw HarnessLaunchError(reason: "share-store-harness not found; looked at \(candidates)")
        }
        return found
    }

    /// Starts `path` with `arguments`; stdout is captured, stderr inherited.
    static func launch(_ path: String, _ arguments: [String]) throws -> HarnessProcess {
        var pipe: [Int32] = [0, 0]
        // Close-on-exec from the start (Glibc hides pipe2): a child spawned concurrently by another
        // test must not inherit this end, or the end of output would never come.
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pipe) == 0 else {
            throw HarnessLaunchError(reason: "socketpair: errno \(errno)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(pipe[1])
        guard result == 0 else {
            close(pipe[0])
            throw HarnessLaunchError(reason: "posix_spawn \(path): \(String(cString: strerror(result)))")
        }
        return HarnessProcess(pid: pid, output: pipe[0])
    }

    /// The next stdout line, or `nil` at end of output or after `timeout`.
    func readLine(timeout: Duration) -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// Every remaining stdout line, up to the end of output (the process exiting).
    func readRemainingLines(timeout: Duration = .seconds(30)) -> [String] {
        var lines: [String] = []
        while let line = readLine(timeout: timeout) { lines.append(line) }
        if !buffer.isEmpty {
            // A line cut short by the kill.
            lines.append(String(decoding: buffer, as: UTF8.self) + "⟂")
            buffer.removeAll()
        }
        return lines
    }

    /// SIGKILL, then reap.
    @discardableResult
    func kill() -> Status {
        if let status { return status }
        _ = Glibc.kill(pid, SIGKILL)
        return wait()
    }

    /// Waits for the process to end.
    @discardableResult
    func wait() -> Status {
        if let status { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WTERMSIG are macros; decode the classic layout.
        let finished: Status = raw & 0x7F == 0 ? .exited((raw >> 8) & 0xFF) : .signalled(raw & 0x7F)
        status = finished
        return finished
    }
}

struct HarnessLaunchError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
