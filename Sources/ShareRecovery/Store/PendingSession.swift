/// The custodian session of a backup or recovery that has not ended yet, as the device's store
/// records it: written before the custodian is asked to finish the session, cleared once the
/// session is confirmed (and, for a recovery, the new share promoted) or abandoned. A device that
/// starts with one recorded was cut off mid-operation; ``RecoveryEngine/resumeInterruptedOperation()``
/// settles it with the custodian before anything else runs.
public struct PendingSession: Sendable, Equatable {
    /// What the session was for.
    public enum Purpose: UInt8, Sendable {
        /// A backup: nothing is staged on the device; settling abandons or keeps the custodian's side.
        case backup = 1
        /// A recovery: a new share may be staged; settling promotes or discards it.
        case recovery = 2
        /// A refresh (docs/formats.md §3): as a recovery, a new share may be staged.
        case refresh = 3

        /// Whether a new signing share may be staged, to promote or discard when the session settles.
        public var stagesShare: Bool { self != .backup }

        /// The purpose's name, as the CLI prints it.
        public var name: String {
            switch self {
            case .backup: "backup"
            case .recovery: "recovery"
            case .refresh: "refresh"
            }
        }
    }

    /// The custodian's session id (1…256 visible ASCII bytes, as the API gives it).
    public let sessionId: String
    /// Backup, recovery or refresh.
    public let purpose: Purpose

    /// Creates a record.
    public init(sessionId: String, purpose: Purpose) {
        self.sessionId = sessionId
        self.purpose = purpose
    }

    /// Not a secret, but bound to its store: magic `SRPS`, version 1, purpose, id length (1 byte), id.
    static let magic: [UInt8] = Array("SRPS".utf8)

    /// The record's bytes.
    var encoded: [UInt8] {
        let id = Array(sessionId.utf8)
        return Self.magic + [1, purpose.rawValue, UInt8(id.count)] + id
    }

    /// Reads a record's bytes.
    /// - Throws: `storeCorrupted` for anything but exactly one well-formed record.
    init(encoded bytes: [UInt8]) throws(ShareRecoveryError) {
        guard bytes.count >= 8, Array(bytes[0..<4]) == Self.magic, bytes[4] == 1,
            let purpose = Purpose(rawValue: bytes[5]), bytes[6] > 0, bytes.count == 7 + Int(bytes[6]),
            bytes[7...].allSatisfy({ (0x21...0x7E).contains($0) })
        else { throw ShareRecoveryError(.storeCorrupted, "the store's pending-session record is damaged") }
        self.purpose = purpose
        self.sessionId = String(decoding: bytes[7...], as: UTF8.self)
    }

    /// Whether an id can be recorded (the API's ids are 32 hex digits; the limit leaves room).
    static func isRecordable(_ id: String) -> Bool {
        (1...255).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
