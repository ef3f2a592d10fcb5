public import ShareCrypto

/// The custodian role's states at rest: a keeper that waits for the client's next call across
/// requests (the reference server) seals these bytes and needs nothing else of the role.
///
/// Layout, version 1. Both states begin `SRRS`, version (1), round (1 ``ResharingCustodian/Opened``,
/// 2 ``ResharingCustodian/Pending``), purpose (1 backup, 2 recovery, 3 refresh), the §5 method byte
/// (0 for a refresh, which has no method), and the expected set: 0, or 1 and its 16-byte setId.
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
        let (purposeByte, methodByte): (UInt8, UInt8) =
            switch purpose {
            case .backup(let method): (1, method.rawValue)
            case .recovery(let method): (2, method.rawValue)
            case .refresh: (3, 0)
            }
        return magic + [version, round.rawValue, purposeByte, methodByte]
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
        let methodByte = try reader.byte()
        let purpose: ResharingSessionRequest.Purpose
        switch (purposeByte, BackupMethod(rawValue: methodByte)) {
        case (1, let method?): purpose = .backup(method)
        case (2, let method?): purpose = .recovery(method)
        case (3, nil) where methodByte == 0: purpose = .refresh
        default: throw ShareRecoveryError(.malformedRecord, "unknown purpose or method in a resharing state")
        }
        let expectedSet: SetID? =
            switch try reader.byte() {
            case 0: nil
            case 1: try SetID(bytes: try reader.read(SetID.count))
            default: throw ShareRecoveryError(.malformedRecord, "bad expected-set flag in a resharing state")
            }
        return (purpose, expectedSet)
    }
}

extension ResharingCustodian.Opened {
    /// The state's bytes, in a wiped buffer.
    public func serialized() -> SecureBytes {
        var parts = [
            SecureBytes(
                copying: ResharingCustodian.header(.opened, purpose: purpose, expectedSet: expectedSet)
                    + StateReader.planBytes(plan) + [UInt8(dealings.count)])
        ]
        for dealing in dealings {
            // `init` guarantees a sub-share for every custodian party.
            parts.append(StateReader.dealingBytes(dealing, subSharesOf: ResharingCustodian.ownParties(plan)))
        }
        return SecureBytes.concatenating(parts)
    }

    /// Reads bytes from ``serialized()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for bytes of another shape, round or
    ///   version; the plan's, points' and scalars' codes for values that do not decode;
    ///   `invalidParameters` when the dealings do not fit the plan.
    public init(serialized bytes: SecureBytes) throws(ShareRecoveryError) {
        var reader = StateReader(bytes, name: "resharing")
        let (purpose, expectedSet) = try ResharingCustodian.readHeader(.opened, from: &reader)
        let plan = try reader.plan()
        var dealings: [Dealing] = []
        for _ in 0..<(try reader.byte()) {
            dealings.append(try reader.dealing(plan: plan, subSharesOf: ResharingCustodian.ownParties(plan)))
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
        var reader = StateReader(bytes, name: "resharing")
        let (purpose, expectedSet) = try ResharingCustodian.readHeader(.pending, from: &reader)
        var shares: [ShareRecord] = []
        for _ in 0..<(try reader.byte()) {
            shares.append(try ShareRecord(binary: try reader.secret(try reader.uint16())))
        }
        try reader.checkAtEnd()
        let keepsSet = purpose.replacesSigningSet
        guard keepsSet != shares.isEmpty else {
            throw ShareRecoveryError(
                .malformedRecord, "a pending recovery or refresh keeps its new signing set, a pending backup none")
        }
        self.init(purpose: purpose, signingSetToKeep: keepsSet ? shares : nil, expectedSet: expectedSet)
    }
}
