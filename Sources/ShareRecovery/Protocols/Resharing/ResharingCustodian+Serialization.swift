public import ShareCrypto

/// The custodian role's states at rest: a keeper that waits for the client's next call across
/// requests (the reference server) seals these bytes and needs nothing else of the role.
///
/// Layout, version 1. Both states begin `SRRS`, version (1), round (1 ``ResharingCustodian/Opened``,
/// 2 ``ResharingCustodian/Pending``), purpose (1 backup, 2 recovery), the §5 method byte, and the
/// expected set: 0, or 1 and its 16-byte setId.
/// - Opened: the plan's length (2 bytes, big-endian) and its `SessionWire` JSON (UTF-8, as
///   `JSONWriter` writes it; any other spelling is refused, so a state has one byte form), the number
///   of dealings, then per dealing: dealer index, t' commitments, and the sub-share (32) of each
///   custodian party in ascending order.
/// - Pending: the number of shares to keep (0 for a backup), then per share its length (2 bytes,
///   big-endian) and its §4 record.
///
/// Sub-shares and records are secret; only a sealed copy may be stored.
extension ResharingCustodian {
    fileprivate static let magic = Array("SRRS".utf8)
    fileprivate static let version: UInt8 = 1

    fileprivate enum Round: UInt8 {
        case opened = 1
        case pending = 2
    }

    /// The header both states share.
    fileprivate static func header(_ round: Round, purpose: ResharingSessionRequest.Purpose, expectedSet: SetID?)
        -> [UInt8]
    {
        let (purposeByte, method): (UInt8, BackupMethod) =
            switch purpose {
            case .backup(let method): (1, method)
            case .recovery(let method): (2, method)
            }
        return magic + [version, round.rawValue, purposeByte, method.rawValue]
            + (expectedSet.map { [1] + $0.bytes } ?? [0])
    }

    /// Reads the header; the reader then stands at the round's body.
    fileprivate static func readHeader(_ round: Round, from reader: inout StateReader) throws(ShareRecoveryError)
        -> (purpose: ResharingSessionRequest.Purpose, expectedSet: SetID?)
    {
        guard try reader.read(4) == magic, try reader.byte() == version, try reader.byte() == round.rawValue else {
            throw ShareRecoveryError(
                .malformedRecord, "not a version-1 resharing \(round == .opened ? "opened" : "pending") state")
        }
        let purposeByte = try reader.byte()
        guard let method = BackupMethod(rawValue: try reader.byte()), purposeByte == 1 || purposeByte == 2 else {
            throw ShareRecoveryError(.malformedRecord, "unknown purpose or method in a resharing state")
        }
        let expectedSet: SetID? =
            switch try reader.byte() {
            case 0: nil
            case 1: try SetID(bytes: try reader.read(SetID.count))
            default: throw ShareRecoveryError(.malformedRecord, "bad expected-set flag in a resharing state")
            }
        return (purposeByte == 1 ? .backup(method) : .recovery(method), expectedSet)
    }
}

extension ResharingCustodian.Opened {
    /// The state's bytes, in a wiped buffer.
    public func serialized() -> SecureBytes {
        let planBytes = Array(JSONWriter.write(SessionWire.encode(plan)).utf8)
        var parts = [
            SecureBytes(
                copying: ResharingCustodian.header(.opened, purpose: purpose, expectedSet: expectedSet)
                    + [UInt8(planBytes.count >> 8), UInt8(planBytes.count & 0xFF)] + planBytes + [UInt8(dealings.count)]
            )
        ]
        for dealing in dealings {
            parts.append(
                SecureBytes(copying: [UInt8(dealing.dealerIndex)] + dealing.commitments.flatMap(\.rawRepresentation)))
            // `init` guarantees a sub-share for every custodian party.
            for party in ResharingCustodian.ownParties(plan) {
                parts.append(dealing.subShares[party]!.rawRepresentation)
            }
        }
        return SecureBytes.concatenating(parts)
    }

    /// Reads bytes from ``serialized()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for bytes of another shape, round or
    ///   version; the plan's, points' and scalars' codes for values that do not decode;
    ///   `invalidParameters` when the dealings do not fit the plan.
    public init(serialized bytes: SecureBytes) throws(ShareRecoveryError) {
        var reader = StateReader(bytes)
        let (purpose, expectedSet) = try ResharingCustodian.readHeader(.opened, from: &reader)
        let planBytes = try reader.read(try reader.uint16())
        let plan: ResharingPlan
        do {
            plan = try SessionWire.decodePlan(try StrictJSON.parse(planBytes))
        } catch let error as ShareRecoveryError {
            throw error
        } catch {
            throw ShareRecoveryError(.malformedRecord, "the resharing state's plan is not JSON")
        }
        // One byte form per state: the plan's JSON is the form `serialized()` writes.
        guard Array(JSONWriter.write(SessionWire.encode(plan)).utf8) == planBytes else {
            throw ShareRecoveryError(.malformedRecord, "the resharing state's plan is not in its written form")
        }
        let curve = plan.oldSet.curve
        let ownParties = ResharingCustodian.ownParties(plan)
        var dealings: [Dealing] = []
        for _ in 0..<(try reader.byte()) {
            let dealerIndex = Int(try reader.byte())
            let commitments = try (0..<plan.newThreshold).map { (_) throws(ShareRecoveryError) in
                let encoded = try reader.read(curve.pointCount)
                return try mappingCryptoErrors { try Point(rawRepresentation: encoded, curve: curve) }
            }
            var subShares: [Int: Scalar] = [:]
            for party in ownParties {
                let secret = try reader.secret(Curve.scalarCount)
                subShares[party] = try mappingCryptoErrors { try Scalar(secure: secret, curve: curve) }
            }
            dealings.append(Dealing(dealerIndex: dealerIndex, commitments: commitments, subShares: subShares))
        }
        try reader.checkAtEnd()
        try self.init(purpose: purpose, plan: plan, dealings: dealings, expectedSet: expectedSet)
    }
}

extension ResharingCustodian.Pending {
    /// The state's bytes, in a wiped buffer.
    /// - Throws: The record codes of ``ShareRecord/binary()`` (a share to keep that has no secret).
    public func serialized() throws(ShareRecoveryError) -> SecureBytes {
        let shares = signingSetToKeep ?? []
        var parts = [
            SecureBytes(
                copying: ResharingCustodian.header(.pending, purpose: purpose, expectedSet: expectedSet) + [
                    UInt8(shares.count)
                ])
        ]
        for share in shares {
            let record = try share.binary()
            parts += [SecureBytes(copying: [UInt8(record.count >> 8), UInt8(record.count & 0xFF)]), record]
        }
        return SecureBytes.concatenating(parts)
    }

    /// Reads bytes from ``serialized()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for bytes of another shape, round or
    ///   version, or a share count that does not fit the purpose; the record codes of
    ///   ``ShareRecord/init(binary:)``.
    public init(serialized bytes: SecureBytes) throws(ShareRecoveryError) {
        var reader = StateReader(bytes)
        let (purpose, expectedSet) = try ResharingCustodian.readHeader(.pending, from: &reader)
        var shares: [ShareRecord] = []
        for _ in 0..<(try reader.byte()) {
            shares.append(try ShareRecord(binary: try reader.secret(try reader.uint16())))
        }
        try reader.checkAtEnd()
        let isRecovery = if case .recovery = purpose { true } else { false }
        guard isRecovery != shares.isEmpty else {
            throw ShareRecoveryError(
                .malformedRecord, "a pending recovery keeps its new signing set, a pending backup none")
        }
        self.init(purpose: purpose, signingSetToKeep: isRecovery ? shares : nil, expectedSet: expectedSet)
    }
}

/// Reads a state's bytes front to back: public parts as plain bytes, secret parts only as slices of
/// the wiped buffer.
private struct StateReader {
    let bytes: SecureBytes
    var offset = 0

    init(_ bytes: SecureBytes) { self.bytes = bytes }

    mutating func secret(_ count: Int) throws(ShareRecoveryError) -> SecureBytes {
        guard offset + count <= bytes.count else {
            throw ShareRecoveryError(.malformedRecord, "the resharing state is truncated")
        }
        defer { offset += count }
        return try mappingCryptoErrors { try bytes.slice(offset..<offset + count) }
    }

    mutating func read(_ count: Int) throws(ShareRecoveryError) -> [UInt8] { try secret(count).revealedBytes() }

    mutating func byte() throws(ShareRecoveryError) -> UInt8 { try read(1)[0] }

    mutating func uint16() throws(ShareRecoveryError) -> Int {
        let pair = try read(2)
        return Int(pair[0]) << 8 | Int(pair[1])
    }

    func checkAtEnd() throws(ShareRecoveryError) {
        guard offset == bytes.count else {
            throw ShareRecoveryError(.malformedRecord, "the resharing state has trailing bytes")
        }
    }
}
