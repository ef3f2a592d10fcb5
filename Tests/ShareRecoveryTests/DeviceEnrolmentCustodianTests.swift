import ShareCrypto
import ShareRecovery
import Testing

/// The custodian's role in a device enrolment (docs/devices.md), driven directly with the
/// approver's and the new device's sides of ``DeviceEnrolment``: what the reference server keeps.
@Suite("Device enrolment custodian role")
struct DeviceEnrolmentCustodianTests {
    @Test("open → approve → finish → join: a new 2-of-2 set of the same key", arguments: Curve.allCases)
    func enrolment(curve: Curve) throws {
        let set = try KeyGeneration.generate(curve: curve, walletId: "w")
        let custodian = try DeviceEnrolmentCustodian.open(approvingSet: set[1], newSetId: SetID.random())
        #expect(custodian.plan.oldSet.isSameSet(as: set[1].publicDescription) && custodian.plan.newKind == .signing)
        #expect(Set(custodian.offeredDealing.subShares.keys) == [DeviceEnrolment.deviceIndex])
        let (approver, newCommitments) = try DeviceEnrolment.approve(
            plan: custodian.plan, custodianCommitments: custodian.dealing.commitments, approverShare: set[0])
        let custodianShare = try custodian.finish(
            approverDealing: Dealing(
                dealerIndex: approver.dealerIndex, commitments: approver.commitments,
                subShares: approver.subShares.filter { $0.key == DeviceEnrolment.custodianIndex }))
        let deviceShare = try DeviceEnrolment.join(
            plan: custodian.plan,
            dealings: [
                Dealing(
                    dealerIndex: approver.dealerIndex, commitments: approver.commitments,
                    subShares: approver.subShares.filter { $0.key == DeviceEnrolment.deviceIndex }),
                custodian.offeredDealing,
            ],
            newCommitments: newCommitments)
        #expect(custodianShare.commitments == newCommitments && custodianShare.publicKey == set[0].publicKey)
        #expect(custodianShare.partyIndex == 2 && deviceShare.partyIndex == 1)
        #expect(custodianShare.setId == custodian.plan.newSetId && custodianShare.generation == set[0].generation)
        // The two new shares sign together for the wallet's key (`sign` verifies the signature).
        let (package, _) = try ThresholdSigning.sign(shares: [deviceShare, custodianShare], message: [1, 2, 3])
        #expect(package.publicKey == set[0].publicKey)
    }

    @Test(
        "the role's refusals: another party's share, a dealing from another dealer or with other sub-shares, a dealing that does not fit"
    )
    func refusals() throws {
        let set = try KeyGeneration.generate(curve: .secp256k1, walletId: "w")
        var error = #expect(throws: ShareRecoveryError.self) {
            _ = try DeviceEnrolmentCustodian.open(approvingSet: set[0], newSetId: SetID.random())
        }
        #expect(error?.code == .invalidParameters)
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try DeviceEnrolmentCustodian.open(approvingSet: set[1], newSetId: set[1].setId)
        }
        #expect(error?.code == .invalidParameters)

        let custodian = try DeviceEnrolmentCustodian.open(approvingSet: set[1], newSetId: SetID.random())
        let (approver, _) = try DeviceEnrolment.approve(
            plan: custodian.plan, custodianCommitments: custodian.dealing.commitments, approverShare: set[0])
        for dealing in [
            // Both sub-shares: the new device's is not the custodian's to see.
            approver,
            Dealing(dealerIndex: 2, commitments: approver.commitments, subShares: [2: approver.subShares[2]!]),
        ] {
            error = #expect(throws: ShareRecoveryError.self) { _ = try custodian.finish(approverDealing: dealing) }
            #expect(error?.code == .dealerCheckFailed)
        }
        // A wrong sub-share fails the dealer's commitments.
        let forged = Dealing(dealerIndex: 1, commitments: approver.commitments, subShares: [2: approver.subShares[1]!])
        error = #expect(throws: ShareRecoveryError.self) { _ = try custodian.finish(approverDealing: forged) }
        #expect(error?.code == .subShareCheckFailed)
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try DeviceEnrolmentCustodian.Opened(plan: custodian.plan, dealing: custodian.offeredDealing)
        }
        #expect(error?.code == .invalidParameters)
    }
}
