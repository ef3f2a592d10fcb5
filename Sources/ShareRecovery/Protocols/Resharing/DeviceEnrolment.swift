public import ShareCrypto

/// A new device joining a 2-of-2 wallet whose other party is the custodian (docs/devices.md): one
/// docs/formats.md §3 resharing whose dealers are an approving device's set {device 1, custodian 2} and
/// whose new set is {new device 1, custodian 2}, of the same public key, under a fresh setId and the
/// approving set's generation. The approving set stays alive; the key is never rebuilt.
///
/// Who learns what: the new device's share x'_1 = g_A(1) + g_C(1). The approver deals g_A and seals
/// g_A(1) to the new device's key; the custodian deals g_C and seals g_C(1) to the same key; each
/// knows only its own half, so neither learns x'_1, and the new device learns nothing of x_A or x_C.
/// The custodian's new share x'_2 = g_A(2) + g_C(2) is the custodian's alone.
public enum DeviceEnrolment {
    /// The device's index in both sets: the approver's in the old one, the new device's in the new one.
    public static let deviceIndex = 1
    /// The custodian's index in both sets.
    public static let custodianIndex = 2

    /// The plan of a device enrolment from an approving set.
    /// - Parameters:
    ///   - approvingSet: Any record of the approving 2-of-2 signing set (its secret is not used).
    ///   - newSetId: The new device's set id; must differ from the approving set's.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` when the set is not a 2-of-2 signing set.
    public static func plan(approvingSet: ShareRecord, newSetId: SetID) throws(ShareRecoveryError) -> ResharingPlan {
        try checkShape(approvingSet)
        return try ResharingPlan(
            oldSet: approvingSet, dealers: [deviceIndex, custodianIndex], newThreshold: 2, newParties: 2,
            newKind: .signing,
            newGeneration: approvingSet.generation, newSetId: newSetId)
    }

    /// Whether a plan is a device enrolment from `approvingSet`: the approver checks the custodian's
    /// plan before dealing, the new device before combining, the custodian before storing.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` naming what differs.
    public static func check(_ plan: ResharingPlan, approvingSet: ShareRecord) throws(ShareRecoveryError) {
        try checkShape(approvingSet)
        guard plan.oldSet.isSameSet(as: approvingSet.publicDescription), plan.dealers == [deviceIndex, custodianIndex],
            plan.newThreshold == 2, plan.newParties == 2, plan.newKind == .signing,
            plan.newGeneration == approvingSet.generation
        else {
            throw ShareRecoveryError(
                .invalidParameters,
                "the plan is not a device enrolment from set \(approvingSet.setId): it must reshare that 2-of-2 signing set into a new 2-of-2 signing set of the same generation"
            )
        }
    }

    /// The approving device's side: checks the plan and the custodian's public dealing, and deals.
    /// - Parameters:
    ///   - plan: The custodian's plan.
    ///   - custodianCommitments: D_{C,0…1} of the custodian's dealing (its sub-shares are not the approver's to see).
    ///   - approverShare: The approving device's signing share (party 1), with its secret.
    ///   - random: The source of g_A's higher coefficient.
    /// - Returns: The approver's dealing (both sub-shares: the caller seals g_A(1) to the new device and
    ///   g_A(2) to the custodian) and the new set's commitments A'_0, A'_1 (A'_0 = the wallet key).
    /// - Throws: ``ShareRecoveryError``: `invalidParameters` for another plan; `dealerCheckFailed` when
    ///   the custodian's constant term is not λ_C·X_C; `publicKeyMismatch` when the key would change.
    public static func approve(
        plan: ResharingPlan, custodianCommitments: [Point], approverShare: ShareRecord,
        using random: some RandomSource = SystemRandom()
    ) throws(ShareRecoveryError) -> (dealing: Dealing, newCommitments: [Point]) {
        try check(plan, approvingSet: approverShare)
        guard approverShare.partyIndex == deviceIndex, approverShare.secret != nil else {
            throw ShareRecoveryError(
                .invalidParameters, "approving a device needs this device's signing share (party 1) with its secret")
        }
        let dealing = try ResharingDealer.deal(share: approverShare, plan: plan, using: random)
        let custodian = Dealing(dealerIndex: custodianIndex, commitments: custodianCommitments, subShares: [:])
        let newCommitments = try ResharingReceiver.newCommitments(plan: plan, dealings: [dealing, custodian])
        return (dealing, newCommitments)
    }

    /// The new device's side: checks both dealings and combines its share (party 1 of the new set).
    /// - Parameters:
    ///   - plan: The enrolment's plan (its old set is the approving set).
    ///   - dealings: The approver's and the custodian's dealings, each with its sub-share for party 1.
    ///   - newCommitments: The new set's commitments as the custodian stored them.
    /// - Returns: The new device's signing share.
    /// - Throws: Every code of ``ResharingReceiver/receive(partyIndex:plan:dealings:)``, and
    ///   `publicKeyMismatch` when the custodian's commitments differ from the device's.
    public static func join(plan: ResharingPlan, dealings: [Dealing], newCommitments: [Point])
        throws(ShareRecoveryError)
        -> ShareRecord
    {
        try check(plan, approvingSet: plan.oldSet)
        let share = try ResharingReceiver.receive(partyIndex: deviceIndex, plan: plan, dealings: dealings)
        guard share.commitments == newCommitments else {
            throw ShareRecoveryError(
                .publicKeyMismatch, "the custodian stored other commitments for the new device's set")
        }
        return share
    }

    private static func checkShape(_ set: ShareRecord) throws(ShareRecoveryError) {
        guard set.kind == .signing, set.threshold == 2, set.parties == 2 else {
            throw ShareRecoveryError(
                .invalidParameters,
                "a device joins a 2-of-2 signing set with the custodian; set \(set.setId) is a \(set.threshold)-of-\(set.parties) \(set.kind) set"
            )
        }
    }
}
