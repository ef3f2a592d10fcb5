public import ShareCrypto

/// The custodian's side of a device enrolment (``DeviceEnrolment``, docs/devices.md) as values:
/// ``open(approvingSet:newSetId:using:)`` → ``Opened`` (the plan and the custodian's dealing g_C) →
/// ``Opened/finish(approverDealing:)`` → the custodian's share x'_2 of the new set.
///
/// Transport-free: the keeper seals ``Opened/offeredDealing`` to the new device's key and keeps
/// ``Opened`` between the approver's two calls, in memory or as its byte form (`serialized()`,
/// `init(serialized:)`) sealed into a session row. The keeper adds no check of its own.
public enum DeviceEnrolmentCustodian {
    /// An enrolment after open: the plan and the custodian's dealing, with both sub-shares (secret).
    public struct Opened: Sendable, CustomStringConvertible {
        /// The enrolment's plan; its old set is the approving set.
        public let plan: ResharingPlan
        /// g_C: the custodian's dealing, with its sub-shares for the new device (1) and itself (2).
        public let dealing: Dealing

        /// Restores an opened enrolment a keeper stored.
        /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when the plan is not a device
        ///   enrolment, or the dealing is not the custodian's with exactly both sub-shares and t'
        ///   commitments.
        public init(plan: ResharingPlan, dealing: Dealing) throws(ShareRecoveryError) {
            try DeviceEnrolment.check(plan, approvingSet: plan.oldSet)
            guard dealing.dealerIndex == DeviceEnrolment.custodianIndex,
                dealing.commitments.count == plan.newThreshold,
                Set(dealing.subShares.keys) == Set(DeviceEnrolmentCustodian.newParties)
            else {
                throw ShareRecoveryError(
                    .invalidParameters, "the custodian's dealing does not fit the enrolment's plan")
            }
            self.plan = plan
            self.dealing = dealing
        }

        /// The dealing as the new device receives it: only its own sub-share g_C(1).
        public var offeredDealing: Dealing {
            Dealing(
                dealerIndex: dealing.dealerIndex, commitments: dealing.commitments,
                subShares: dealing.subShares.filter { $0.key == DeviceEnrolment.deviceIndex })
        }

        /// Finish: checks the approver's dealing with the custodian's (docs/formats.md §3 steps 2–5)
        /// and combines the custodian's share of the new set.
        /// - Parameter approverDealing: The approver's dealing g_A, with exactly its sub-share for
        ///   the custodian (party 2); its sub-share for the new device is not the custodian's to see.
        /// - Returns: The custodian's new signing share (party 2), with its secret.
        /// - Throws: ``ShareRecoveryError``: `dealerCheckFailed` for a dealing from another party
        ///   than the approver or carrying other sub-shares, and every code of ``ResharingReceiver``.
        public func finish(approverDealing: Dealing) throws(ShareRecoveryError) -> ShareRecord {
            guard approverDealing.dealerIndex == DeviceEnrolment.deviceIndex,
                Set(approverDealing.subShares.keys) == [DeviceEnrolment.custodianIndex]
            else {
                throw ShareRecoveryError(
                    .dealerCheckFailed,
                    "the approver's dealing must be dealer \(DeviceEnrolment.deviceIndex)'s, with exactly its sub-share for party \(DeviceEnrolment.custodianIndex)"
                )
            }
            return try ResharingReceiver.receive(
                partyIndex: DeviceEnrolment.custodianIndex, plan: plan, dealings: [approverDealing, dealing])
        }

        public var description: String {
            "DeviceEnrolmentCustodian.Opened(plan for set \(plan.newSetId), sub-shares redacted)"
        }
    }

    /// Open: plans the enrolment from the custodian's share of the approving set and deals g_C.
    /// - Parameters:
    ///   - approvingSet: The custodian's signing share (party 2) of the approving 2-of-2 set.
    ///   - newSetId: The new device's set id; must differ from the approving set's.
    ///   - random: The source of g_C's higher coefficient.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when the set is not a 2-of-2 signing
    ///   set, the share is not the custodian's with its secret, or `newSetId` is the approving set's.
    public static func open(
        approvingSet: ShareRecord, newSetId: SetID, using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> Opened {
        guard approvingSet.partyIndex == DeviceEnrolment.custodianIndex, approvingSet.secret != nil else {
            throw ShareRecoveryError(
                .invalidParameters,
                "the custodian deals from its own signing share (party \(DeviceEnrolment.custodianIndex)) of the approving set, with its secret"
            )
        }
        let plan = try DeviceEnrolment.plan(approvingSet: approvingSet, newSetId: newSetId)
        return try Opened(plan: plan, dealing: try ResharingDealer.deal(share: approvingSet, plan: plan, using: random))
    }

    /// The parties of the new set, both of which the custodian deals a sub-share to.
    static let newParties = [DeviceEnrolment.deviceIndex, DeviceEnrolment.custodianIndex]
}
