#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ShareCrypto
import ShareRecovery

/// A child process for the store crash tests (StoreCrashTests): it works on a FileSigningShareStore
/// until it is killed, printing one line per durable step on stdout (unbuffered).
///
///     share-store-harness promote-loop --store DIR --passcode-file FILE [--limit N]
///         ready <generation>         the store is open and authenticated; <generation> is current
///         staged <g>                 stage(g) returned
///         promoted <g>               promoteStaged() returned: g is current
///     share-store-harness wrong-passcode --store DIR --passcode-file FILE [--attempts N] [--skip-clock]
///         ready <failures>           the store is open
///         failed <failures>          authenticate() returned wrongPasscode; <failures> are on disk
///         locked <failures>          the store is locked out
///     share-store-harness recover --store DIR --passcode-file FILE --fixture DIR
///         ready <generation>         the store is open and authenticated; <generation> is current
///         status <name>              a docs/formats.md §8 status began
///         recovered <generation>     recover() returned: <generation> is stored and current
///
/// The passcode is read from a file (a test passcode; never argv). `promote-loop` needs a store
/// with a passcode; with no current share it starts at generation 0 from a deterministic key
/// generation (`HarnessWallet`). `--skip-clock` makes the store's clock jump a day per reading, so
/// the attempt delays never hold the loop up. `recover` runs one whole recovery through
/// `RecoveryEngine` with an in-process custodian: the fixture directory holds `cipherText`, `secret`
/// (the password), `custodian.key` (hex) and `custodian-shares.json` (a JSON array), for the client
/// `HarnessWallet.clientId`.
@main
struct Harness {
    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
            exit(0)
        } catch {
            emit("share-store-harness: \(error)\n", to: STDERR_FILENO)
            exit(1)
        }
    }

    static func run(_ arguments: [String]) async throws {
        guard let command = arguments.first else { throw HarnessError.usage }
        var options: [String: String] = [:]
        var flags: Set<String> = []
        var rest = arguments.dropFirst()
        while let option = rest.popFirst() {
            if option == "--skip-clock" {
                flags.insert(option)
            } else if option.hasPrefix("--"), let value = rest.popFirst() {
                options[option] = value
            } else {
                throw HarnessError.usage
            }
        }
        guard let directory = options["--store"], let passcodeFile = options["--passcode-file"] else {
            throw HarnessError.usage
        }
        let passcode = try readSecretFile(passcodeFile)
        switch command {
        case "promote-loop":
            let limit = try options["--limit"].map(parseCount) ?? Int.max
            try await promoteLoop(directory: directory, passcode: passcode, limit: limit)
        case "wrong-passcode":
            let attempts = try options["--attempts"].map(parseCount) ?? Int.max
            let clock: any PasscodeClock = flags.contains("--skip-clock") ? SkippingClock() : SystemPasscodeClock()
            try await wrongPasscodeLoop(directory: directory, passcode: passcode, attempts: attempts, clock: clock)
        case "recover":
            guard let fixture = options["--fixture"] else { throw HarnessError.usage }
            try await recover(directory: directory, passcode: passcode, fixture: fixture)
        default:
            throw HarnessError.usage
        }
    }

    static func recover(directory: String, passcode: SecureBytes, fixture: String) async throws {
        let store = try FileSigningShareStore(directory: directory)
        try await store.authenticate(passcode)
        let cipherText = String(decoding: try readFile("\(fixture)/cipherText", limit: 1 << 16), as: UTF8.self)
        let secret = try BackupSecret.text(utf8: try readSecretFile("\(fixture)/secret"))
        guard
            let keyBytes = Hex.decodeSecret(
                String(decoding: try readFile("\(fixture)/custodian.key", limit: 128), as: UTF8.self))
        else { throw HarnessError.usage }
        guard
            case .array(let elements) = try StrictJSON.parse(
                try readFile("\(fixture)/custodian-shares.json", limit: 1 << 20))
        else { throw HarnessError.usage }
        let integrator = InMemoryIntegrator()
        for case .string(let share) in elements {
            try await integrator.deliverBackupShare(share, clientId: HarnessWallet.clientId)
        }
        let custodian = LocalCustodian(key: try SealingKeyPair(secretKey: keyBytes), shareSource: integrator)
        let engine = RecoveryEngine(
            configuration: .init(userId: HarnessWallet.clientId, custodian: custodian, shareStore: store))
        emit("ready \(try await store.currentShare().map { String($0.generation) } ?? "none")\n")
        let recovered = try await engine.recover(method: .password, cipherText: cipherText, secret: secret) { status in
            emit("status \(status)\n")
        }
        emit("recovered \(recovered.generation)\n")
    }

    static func promoteLoop(directory: String, passcode: SecureBytes, limit: Int) async throws {
        let store = try FileSigningShareStore(directory: directory)
        try await store.authenticate(passcode)
        var current = try await store.currentShare()
        emit("ready \(current.map { String($0.generation) } ?? "none")\n")
        var rounds = 0
        while rounds < limit {
            let next = try current.map(HarnessWallet.next(after:)) ?? HarnessWallet.first()
            try await store.stage(next)
            emit("staged \(next.generation)\n")
            try await store.promoteStaged()
            emit("promoted \(next.generation)\n")
            current = next
            rounds += 1
        }
    }

    static func wrongPasscodeLoop(directory: String, passcode: SecureBytes, attempts: Int, clock: any PasscodeClock)
        async throws
    {
        let store = try FileSigningShareStore(directory: directory, clock: clock)
        emit("ready \(await store.failedAttempts)\n")
        var made = 0
        while made < attempts {
            do {
                try await store.authenticate(passcode)
                throw HarnessError.unexpectedSuccess
            } catch let error as ShareRecoveryError where error.code == .wrongPasscode {
                made += 1
                emit("failed \(await store.failedAttempts)\n")
            } catch let error as ShareRecoveryError where error.code == .lockedOut {
                emit("locked \(await store.failedAttempts)\n")
                return
            } catch let error as ShareRecoveryError where error.code == .attemptTooSoon {
                let delay = await store.delayBeforeNextAttempt()
                try await Task.sleep(for: delay + .milliseconds(10))
            }
        }
    }

    static func parseCount(_ text: String) throws -> Int {
        guard let value = Int(text), value >= 0 else { throw HarnessError.usage }
        return value
    }

    /// Reads a passcode file into secret memory, without a trailing newline.
    static func readSecretFile(_ path: String) throws -> SecureBytes {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw HarnessError.io("open the passcode file", errno) }
        defer { close(descriptor) }
        let capacity = 1024
        var total = 0
        let buffer = try SecureBytes(count: capacity) { out in
            while total < capacity {
                let count = read(descriptor, out.baseAddress! + total, capacity - total)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw HarnessError.io("read the passcode file", errno)
                }
                if count == 0 { break }
                total += count
            }
        }
        var length = total
        while length > 0, buffer.withUnsafeBytes({ $0[length - 1] == 0x0A || $0[length - 1] == 0x0D }) { length -= 1 }
        return try buffer.slice(0..<length)
    }

    /// A whole (small) file.
    static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw HarnessError.io("open \(path)", errno) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var total = 0
        while total < limit {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, limit - total) }
            if count < 0 {
                if errno == EINTR { continue }
                throw HarnessError.io("read \(path)", errno)
            }
            if count == 0 { break }
            total += count
        }
        while total > 0, bytes[total - 1] == 0x0A { total -= 1 }
        return Array(bytes[..<total])
    }

    /// Writes straight to a descriptor: a killed process must not lose lines in a stdio buffer.
    static func emit(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// The harness's wallet: party 1 of a deterministic 2-of-2 secp256k1 set, re-issued at every
/// generation with a fresh setId (a valid record: generation and setId are not part of x_i·G = X_i).
enum HarnessWallet {
    static let walletId = "share-store-harness"
    static let clientId = "share-store-harness client"
    static let seed = Array("share-store-harness seed".utf8)

    static func first() throws -> ShareRecord {
        try KeyGeneration.generate(curve: .secp256k1, walletId: walletId, using: DeterministicRandom(seed: seed))[0]
    }

    static func next(after record: ShareRecord) throws -> ShareRecord {
        try ShareRecord(
            walletId: record.walletId, curve: record.curve, kind: .signing, threshold: record.threshold,
            parties: record.parties, partyIndex: record.partyIndex, generation: record.generation + 1,
            setId: .random(), secret: record.secret, commitments: record.commitments)
    }
}

/// A clock that jumps a day forward at every reading, so attempt delays are always over.
final class SkippingClock: PasscodeClock {
    private let readings = Locked<Int64>(0)
    private let start = SystemPasscodeClock().millisecondsSince1970()

    func millisecondsSince1970() -> Int64 {
        start
            + readings.withLock { value in
                value += 1
                return value * 86_400_000
            }
    }
}

enum HarnessError: Error, CustomStringConvertible {
    case usage
    case unexpectedSuccess
    case io(String, Int32)

    var description: String {
        switch self {
        case .usage:
            "usage: share-store-harness promote-loop|wrong-passcode|recover --store DIR --passcode-file FILE "
                + "[--limit N] [--attempts N] [--skip-clock] [--fixture DIR]"
        case .unexpectedSuccess: "the wrong passcode was accepted"
        case .io(let action, let code): "\(action): \(String(cString: strerror(code)))"
        }
    }
}
