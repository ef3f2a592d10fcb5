#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import ShareCrypto

/// The kind of a store passcode, which tells an app which keypad to show.
///
/// The kind follows from the passcode itself (docs/share-store.md, "Passcode rules"):
/// - only ASCII digits: exactly 4 is ``fourDigits``, exactly 6 is ``sixDigits``, 7 or more is
///   ``alphanumeric``; 1–3 or 5 digits are rejected;
/// - anything else is ``alphanumeric`` when it is valid UTF-8 of at least 6 Unicode scalars with no
///   control characters;
/// - never empty, never more than ``maximumByteCount`` bytes.
///
/// The bytes are used exactly as given (no Unicode normalisation): an app that accepts non-ASCII
/// input should hand over the same normal form (NFC) every time. The kind is not secret; the store
/// keeps it in the clear in its header.
public enum PasscodeKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Exactly four ASCII digits.
    case fourDigits = 1
    /// Exactly six ASCII digits.
    case sixDigits = 2
    /// Six or more characters, or seven or more digits.
    case alphanumeric = 3

    /// The longest accepted passcode, in UTF-8 bytes.
    public static let maximumByteCount = 128
    /// The fewest Unicode scalars of an alphanumeric passcode.
    public static let minimumAlphanumericCount = 6

    /// Checks a passcode against the rules and tells its kind.
    /// - Parameter passcode: The passcode's UTF-8 bytes.
    /// - Throws: ``ShareRecoveryError/Code/invalidPasscode`` when the passcode breaks a rule; the
    ///   reason names the rule, never the passcode or its length.
    public init(validating passcode: SecureBytes) throws(ShareRecoveryError) {
        guard passcode.count > 0 else { throw ShareRecoveryError(.invalidPasscode, "the passcode is empty") }
        guard passcode.count <= Self.maximumByteCount else {
            throw ShareRecoveryError(.invalidPasscode, "a passcode has at most \(Self.maximumByteCount) bytes")
        }
        self = try passcode.withUnsafeBytes { (bytes) throws(ShareRecoveryError) -> PasscodeKind in
            if bytes.allSatisfy({ (0x30...0x39).contains($0) }) {
                switch bytes.count {
                case 4: return .fourDigits
                case 6: return .sixDigits
                case 7...: return .alphanumeric
                default:
                    throw ShareRecoveryError(.invalidPasscode, "a numeric passcode has 4 or 6 digits (or 7 and more)")
                }
            }
            // Decode in place: a String would be an unwiped copy of the passcode.
            var iterator = bytes.makeIterator()
            var decoder = UTF8()
            var scalars = 0
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar):
                    guard scalar.properties.generalCategory != .control else {
                        throw ShareRecoveryError(.invalidPasscode, "a passcode has no control characters")
                    }
                    scalars += 1
                case .emptyInput:
                    break decoding
                case .error:
                    throw ShareRecoveryError(.invalidPasscode, "the passcode is not UTF-8")
                }
            }
            guard scalars >= Self.minimumAlphanumericCount else {
                throw ShareRecoveryError(
                    .invalidPasscode,
                    "an alphanumeric passcode has at least \(Self.minimumAlphanumericCount) characters")
            }
            return .alphanumeric
        }
    }

    /// A name for logs and UI.
    public var description: String {
        switch self {
        case .fourDigits: "4 digits"
        case .sixDigits: "6 digits"
        case .alphanumeric: "alphanumeric"
        }
    }
}

/// How many wrong passcodes a store tolerates, and how long it makes the next attempt wait.
///
/// The first ``freeAttempts`` failures cost nothing; after `f ≥ 3` failures the next attempt is
/// accepted only 2^(f−3) seconds after the last one; at ``maximumFailures`` the store is locked out
/// for good (only ``FileSigningShareStore/remove()`` is left). A correct passcode resets the count.
public enum PasscodeAttemptPolicy {
    /// Failures allowed before any delay.
    public static let freeAttempts = 3
    /// Failures that lock the store out.
    public static let maximumFailures = 10

    /// The wait required after `failures` consecutive failures.
    /// - Parameter failures: The failure count.
    /// - Returns: Zero below ``freeAttempts``, else 2^(failures−3) seconds.
    public static func delay(afterFailures failures: Int) -> Duration {
        guard failures >= freeAttempts else { return .zero }
        return .seconds(Int64(1) << Int64(min(failures - freeAttempts, 40)))
    }
}

/// Wall-clock time for the attempt delays. It must survive restarts, so it is calendar time, not a
/// monotonic clock; tests inject their own.
public protocol PasscodeClock: Sendable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    func millisecondsSince1970() -> Int64
}

/// The system's real-time clock (`CLOCK_REALTIME`).
public struct SystemPasscodeClock: PasscodeClock {
    /// Creates the system clock.
    public init() {}

    /// Milliseconds since 1970-01-01T00:00:00Z.
    public func millisecondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
