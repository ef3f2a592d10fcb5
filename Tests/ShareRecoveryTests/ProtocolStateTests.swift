import ShareCrypto
import ShareRecovery
import Testing

/// Protocol state at rest: what a server seals between the two requests of a DKG, signing or
/// device-enrolment session.
@Suite("Protocol state at rest")
struct ProtocolStateTests {
    @Test("a DKG round-2 state round-trips through its bytes and refuses damaged bytes", arguments: Curve.allCases)
    func dkgStateRoundTripsAndRefusesDamage(curve: Curve) throws {
        let parameters = try DKGParameters(curve: curve, walletId: "wallet-ü", threshold: 2, parties: 3)
        let parties = try (1...3).map { try DKGParty(parameters: parameters, partyIndex: $0) }
        let rounds = try parties.map { try $0.receive(round1: parties.map(\.round1Message)) }
        let mail = rounds.flatMap(\.messages).filter { $0.receiver == 2 }
        let bytes = rounds[1].state.serialized()
        let restored = try DKGRound2State(serialized: bytes)
        #expect(restored.partyIndex == 2 && restored.parameters == parameters)
        #expect(try restored.finish(round2: mail) == (try rounds[1].state.finish(round2: mail)))

        let plain = bytes.revealedBytes()
        for cut in [0, 5, 9, 12, plain.count - 1] {
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try DKGRound2State(serialized: SecureBytes(copying: Array(plain.prefix(cut))))
            }
            #expect(error?.code == .malformedRecord, "cut at \(cut)")
        }
        var otherVersion = plain
        otherVersion[4] = 2
        #expect(throws: ShareRecoveryError.self) {
            _ = try DKGRound2State(serialized: SecureBytes(copying: otherVersion))
        }
        let error = #expect(throws: ShareRecoveryError.self) {
            _ = try DKGRound2State(serialized: SecureBytes(copying: plain + [0]))
        }
        #expect(error?.code == .malformedRecord)
    }

    @Test("a signing nonce's secret round-trips once; a used nonce has none to give", arguments: Curve.allCases)
    func nonceSecretRoundTrips(curve: Curve) throws {
        let shares = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "w", threshold: 2, parties: 2))
        let mode = SigningMode.default(for: curve)
        let signers = try shares.map { try SigningParty(share: $0, mode: mode) }
        let nonces = signers.map { $0.commit() }
        let restored = try FrostSigningNonce(serializedSecret: try nonces[1].serializedSecret(), curve: curve)
        #expect(restored.commitment == nonces[1].commitment)
        nonces[1].discard()
        #expect(throws: ShareCryptoError.self) { _ = try nonces[1].serializedSecret() }
        // The restored copy signs in the original's place, and the signature verifies.
        let package = try SigningPackage(
            signingSet: shares[0], message: [42], mode: mode,
            commitments: [1: nonces[0].commitment, 2: restored.commitment])
        let signature = try package.aggregate(signatureShares: [
            1: try signers[0].sign(nonce: nonces[0], package: package),
            2: try signers[1].sign(nonce: restored, package: package),
        ])
        #expect(
            SignatureVerifier.verify(signature: signature, message: [42], publicKey: shares[0].publicKey, mode: mode))
        #expect(throws: ShareCryptoError.self) {
            _ = try FrostSigningNonce(serializedSecret: SecureBytes(zeros: 63), curve: curve)
        }
    }

    @Test(
        "a device enrolment's custodian state round-trips through its bytes and refuses damaged bytes",
        arguments: Curve.allCases)
    func deviceEnrolmentStateRoundTripsAndRefusesDamage(curve: Curve) throws {
        let set = try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: curve, walletId: "w", threshold: 2, parties: 2))
        let opened = try DeviceEnrolmentCustodian.open(approvingSet: set[1], newSetId: SetID.random())
        let bytes = opened.serialized()
        let restored = try DeviceEnrolmentCustodian.Opened(serialized: bytes)
        #expect(restored.serialized() == bytes)
        #expect(
            restored.plan.newSetId == opened.plan.newSetId && restored.dealing.commitments == opened.dealing.commitments
        )
        // The restored state finishes as the original: the same custodian share from the same dealing.
        let (approver, _) = try DeviceEnrolment.approve(
            plan: opened.plan, custodianCommitments: opened.dealing.commitments, approverShare: set[0])
        let forCustodian = Dealing(
            dealerIndex: 1, commitments: approver.commitments, subShares: [2: try #require(approver.subShares[2])])
        #expect(
            try restored.finish(approverDealing: forCustodian) == (try opened.finish(approverDealing: forCustodian)))

        let plain = bytes.revealedBytes()
        for cut in [0, 3, 5, 7, 40, plain.count - 33, plain.count - 1] {
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try DeviceEnrolmentCustodian.Opened(serialized: SecureBytes(copying: Array(plain.prefix(cut))))
            }
            #expect(error?.code == .malformedRecord, "cut at \(cut)")
        }
        for (index, value) in [(0, UInt8(0x58)), (4, 2)] {
            var damaged = plain
            damaged[index] = value
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try DeviceEnrolmentCustodian.Opened(serialized: SecureBytes(copying: damaged))
            }
            #expect(error?.code == .malformedRecord, "byte \(index)")
        }
        var error = #expect(throws: ShareRecoveryError.self) {
            _ = try DeviceEnrolmentCustodian.Opened(serialized: SecureBytes(copying: plain + [0]))
        }
        #expect(error?.code == .malformedRecord)
        // Another dealer index: the bytes decode, the state does not fit the plan.
        let planCount = Int(plain[5]) << 8 | Int(plain[6])
        var otherDealer = plain
        otherDealer[7 + planCount] = 1
        error = #expect(throws: ShareRecoveryError.self) {
            _ = try DeviceEnrolmentCustodian.Opened(serialized: SecureBytes(copying: otherDealer))
        }
        #expect(error?.code == .invalidParameters)
    }
}
