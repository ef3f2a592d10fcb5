#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import ShareCrypto

/// A custodian backup share as the integrator stores it (docs/formats.md §6): public metadata in JSON
/// and the share record sealed to the custodian's X25519 key.
///
/// Parsing checks shape and ranges only, with no curve work, so selection can rule out candidates
/// cheaply; ``open(with:)`` unseals and cross-checks the sealed record against the JSON.
public struct CustodianBackupShare: Sendable, Equatable {
    /// The JSON `format` string.
    public static let jsonFormat = "share-recovery/custodian-backup-share@1"
    static let formatPrefix = "share-recovery/custodian-backup-share@"
    /// Largest accepted JSON text.
    public static let maximumJSONSize = 64 * 1024

    public let walletId: String
    public let curve: Curve
    public let backupMethod: BackupMethod
    public let setId: SetID
    public let generation: UInt32
    public let threshold: Int
    public let parties: Int
    public let partyIndex: Int
    /// The commitment encodings as given (validated transitively when the sealed record matches them).
    public let commitments: [[UInt8]]
    /// `crypto_box_seal` of the binary share record.
    public let sealedShare: [UInt8]
    /// RFC 3339 UTC timestamp, as given.
    public let createdAt: String

    static let jsonFields = [
        "format", "walletId", "curve", "backupMethod", "setId", "generation", "threshold", "parties", "partyIndex",
        "commitments", "sealedShare", "createdAt",
    ]

    /// Parses the JSON text strictly (§6 with §4's strictness).
    /// - Throws: ``ShareRecoveryError``: `malformedCustodianShare` for shape, `unsupportedVersion`,
    ///   `invalidParameters` for ranges, `unsupportedMethod` for an unknown method.
    public init(json: String) throws(ShareRecoveryError) {
        let value: JSONValue
        do {
            value = try StrictJSON.parse(json, maximumSize: Self.maximumJSONSize)
        } catch {
            throw ShareRecoveryError(.malformedCustodianShare, "not JSON: \(error)")
        }
        let object = try StrictObject(value, required: Self.jsonFields, failure: .malformedCustodianShare)
        try ShareRecord.checkFormat(
            try object.string("format"), expected: Self.jsonFormat, prefix: Self.formatPrefix,
            failure: .malformedCustodianShare)
        walletId = try object.string("walletId")
        guard let curve = Curve(name: try object.string("curve")) else {
            throw ShareRecoveryError(.invalidParameters, "unknown curve")
        }
        self.curve = curve
        guard let method = BackupMethod(name: try object.string("backupMethod")) else {
            throw ShareRecoveryError(.unsupportedMethod, "unknown backupMethod")
        }
        backupMethod = method
        do {
            setId = try SetID(bytes: try object.hex("setId", count: SetID.count))
        } catch {
            throw ShareRecoveryError(.malformedCustodianShare, error.reason)
        }
        generation = UInt32(
            try object.integer("generation", maximum: UInt64(UInt32.max), rangeFailure: .invalidParameters))
        threshold = Int(try object.integer("threshold", maximum: 255, rangeFailure: .invalidParameters))
        parties = Int(try object.integer("parties", maximum: 255, rangeFailure: .invalidParameters))
        partyIndex = Int(try object.integer("partyIndex", maximum: 255, rangeFailure: .invalidParameters))
        commitments = try object.stringArray("commitments").map { (text) throws(ShareRecoveryError) in
            try StrictObject.hex(text, count: curve.pointCount, field: "commitments", failure: .malformedCustodianShare)
        }
        guard let sealed = Base64.decode(try object.string("sealedShare")) else {
            throw ShareRecoveryError(.malformedCustodianShare, "sealedShare is not canonical base64")
        }
        sealedShare = sealed
        createdAt = try object.string("createdAt")
        guard Timestamp.isValid(createdAt) else {
            throw ShareRecoveryError(.malformedCustodianShare, "createdAt is not YYYY-MM-DDTHH:MM:SS[.fraction]Z")
        }
        try ShareRecord.checkRanges(
            walletIdCount: walletId.utf8.count, threshold: threshold, parties: parties, partyIndex: partyIndex)
        guard commitments.count == threshold else {
            throw ShareRecoveryError(.invalidParameters, "\(commitments.count) commitments for threshold \(threshold)")
        }
    }

    /// Seals a custodian backup share.
    /// - Parameters:
    ///   - record: The custodian's share of a backup set, with its secret.
    ///   - method: The backup method of the set.
    ///   - custodianPublicKey: The custodian's 32-byte X25519 public key.
    ///   - createdAt: RFC 3339 UTC timestamp; now when `nil`.
    ///   - random: Source of the sealing's ephemeral key.
    /// - Throws: ``ShareRecoveryError`` for a non-backup record or a bad key.
    public init(
        sealing record: ShareRecord, method: BackupMethod, custodianPublicKey: [UInt8], createdAt: String? = nil,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) {
        guard record.kind == .backup else {
            throw ShareRecoveryError(.invalidParameters, "only a backup share is sealed to the custodian")
        }
        let stamp = createdAt ?? Timestamp.now()
        guard Timestamp.isValid(stamp) else {
            throw ShareRecoveryError(.invalidParameters, "createdAt is not RFC 3339 UTC")
        }
        let binary = try record.binary()
        walletId = record.walletId
        curve = record.curve
        backupMethod = method
        setId = record.setId
        generation = record.generation
        threshold = record.threshold
        parties = record.parties
        partyIndex = record.partyIndex
        commitments = record.commitments.map(\.rawRepresentation)
        sealedShare = try mappingCryptoErrors { try SealedBox.seal(binary, to: custodianPublicKey, using: random) }
        self.createdAt = stamp
    }

    /// The JSON text (§6 field order).
    public var json: String {
        JSONWriter.write(
            .object([
                ("format", .string(Self.jsonFormat)),
                ("walletId", .string(walletId)),
                ("curve", .string(curve.name)),
                ("backupMethod", .string(backupMethod.name)),
                ("setId", .string(setId.hex)),
                ("generation", .number(String(generation))),
                ("threshold", .number(String(threshold))),
                ("parties", .number(String(parties))),
                ("partyIndex", .number(String(partyIndex))),
                ("commitments", .array(commitments.map { .string(Hex.encode($0)) })),
                ("sealedShare", .string(Base64.encode(sealedShare))),
                ("createdAt", .string(createdAt)),
            ]))
    }

    /// Unseals and validates the share record, and checks that it says what the JSON says.
    /// - Parameter keyPair: The custodian's X25519 key pair.
    /// - Returns: The custodian's backup share record, with its secret.
    /// - Throws: ``ShareRecoveryError``: `unsealFailed`, the record codes for a bad record,
    ///   `tamperedShare` when it disagrees with the JSON or is not a backup share.
    public func open(with keyPair: SealingKeyPair) throws(ShareRecoveryError) -> ShareRecord {
        try open(with: keyPair, known: nil)
    }

    /// Opens beside a record validated elsewhere (selection: the user share, whose commitments the
    /// JSON's must equal byte for byte), so its commitments are not validated twice and X_i can be
    /// reached from its X_u.
    func open(with keyPair: SealingKeyPair, known: ShareRecord?) throws(ShareRecoveryError) -> ShareRecord {
        let binary = try mappingCryptoErrors { try SealedBox.open(sealedShare, with: keyPair) }
        let record: ShareRecord
        if let known {
            record = try ShareRecord(binary: binary, known: known)
        } else {
            record = try ShareRecord(binary: binary)
        }
        guard record.kind == .backup else {
            throw ShareRecoveryError(.tamperedShare, "the sealed record is not a backup share")
        }
        guard record.walletId == walletId, record.curve == curve, record.setId == setId,
            record.generation == generation, record.threshold == threshold, record.parties == parties,
            record.partyIndex == partyIndex, record.commitments.map(\.rawRepresentation) == commitments
        else {
            throw ShareRecoveryError(.tamperedShare, "the sealed record disagrees with the JSON")
        }
        return record
    }
}

/// RFC 3339 UTC timestamps in §6's shape.
enum Timestamp {
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return false }
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = digits(0..<4), bytes[4] == UInt8(ascii: "-"), let month = digits(5..<7),
            bytes[7] == UInt8(ascii: "-"), let day = digits(8..<10), bytes[10] == UInt8(ascii: "T"),
            let hour = digits(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = digits(14..<16),
            bytes[16] == UInt8(ascii: ":"), let second = digits(17..<19)
        else { return false }
        // RFC 3339 §5.7: the day must exist in its month (February 29 only in leap years); second 60 is a leap second.
        let isLeapYear = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let daysInMonth = [31, isLeapYear ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour < 24, minute < 60, second <= 60
        else { return false }
        if bytes.count == 20 { return true }
        // Optional fraction: '.' and at least one digit before the 'Z'.
        guard bytes[19] == UInt8(ascii: "."), bytes.count >= 22 else { return false }
        return bytes[20..<bytes.count - 1].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
