public import ShareCrypto

/// The custodian's enrolment state at rest: a keeper that waits for the approver's second call
/// across requests (the reference server) seals these bytes and needs nothing else of the role.
///
/// Layout, version 1: `SRDE`, version (1), the plan's length (2 bytes, big-endian) and its
/// `SessionWire` JSON (UTF-8, as `JSONWriter` writes it; any other spelling is refused, so a state
/// has one byte form), then the custodian's dealing: dealer index (2), its two commitments, and its
/// sub-shares (32 each) for the new device (1) and the custodian (2).
///
/// The sub-shares are secret; only a sealed copy may be stored.
extension DeviceEnrolmentCustodian.Opened {
    private static let magic = Array("SRDE".utf8)
    private static let version: UInt8 = 1

    /// The state's bytes, in a wiped buffer.
    public func serialized() -> SecureBytes {
        SecureBytes.concatenating([
            SecureBytes(copying: Self.magic + [Self.version] + StateReader.planBytes(plan)),
            StateReader.dealingBytes(dealing, subSharesOf: DeviceEnrolmentCustodian.newParties),
        ])
    }

    /// Reads bytes from ``serialized()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for bytes of another shape or version;
    ///   the plan's, points' and scalars' codes for values that do not decode; `invalidParameters`
    ///   when the plan is not a device enrolment or the dealing does not fit it.
    public init(serialized bytes: SecureBytes) throws(ShareRecoveryError) {
        var reader = StateReader(bytes, name: "device enrolment")
        guard try reader.read(Self.magic.count) == Self.magic, try reader.byte() == Self.version else {
            throw ShareRecoveryError(.malformedRecord, "not a version-1 device enrolment state")
        }
        let plan = try reader.plan()
        let dealing = try reader.dealing(plan: plan, subSharesOf: DeviceEnrolmentCustodian.newParties)
        try reader.checkAtEnd()
        try self.init(plan: plan, dealing: dealing)
    }
}
