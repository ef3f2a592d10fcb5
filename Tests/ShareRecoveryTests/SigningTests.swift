import ShareCrypto
import ShareRecovery
import Testing

@Suite("Threshold signing (docs/formats.md §11)")
struct SigningTests {
    struct Combination: Sendable, CustomStringConvertible {
        let curve: Curve, mode: SigningMode
        var description: String { "\(curve) \(mode)" }
    }

    static let combinations = [
        Combination(curve: .ed25519, mode: .rfc9591), Combination(curve: .secp256k1, mode: .bip340),
        Combination(curve: .secp256k1, mode: .rfc9591),
    ]
    static let layouts = [
        RoundTripTests.Layout(threshold: 2, parties: 2), RoundTripTests.Layout(threshold: 2, parties: 3),
        RoundTripTests.Layout(threshold: 3, parties: 5),
    ]

    private static func dkg(_ curve: Curve, _ layout: RoundTripTests.Layout) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(
                curve: curve, walletId: "sign-\(curve)", threshold: layout.threshold, parties: layout.parties))
    }

    @Test(
        "every t-subset of a DKG-made set signs; the signature verifies under Y and not for another message",
        arguments: combinations, layouts)
    func everySubsetSigns(combination: Combination, layout: RoundTripTests.Layout) throws {
        let shares = try Self.dkg(combination.curve, layout)
        let message = Array("pay 1 coin to bob (\(combination))".utf8)
        for subset in [Array(shares.prefix(layout.threshold)), Array(shares.suffix(layout.threshold)), shares] {
            let (package, signature) = try ThresholdSigning.sign(
                shares: subset, message: message, mode: combination.mode)
            #expect(signature.count == combination.mode.signatureCount(on: combination.curve))
            #expect(package.signers == subset.map(\.partyIndex))
            #expect(
                SignatureVerifier.verify(
                    signature: signature, message: message, publicKey: shares[0].publicKey, mode: combination.mode))
            #expect(
                !SignatureVerifier.verify(
                    signature: signature, message: message + [0], publicKey: shares[0].publicKey, mode: combination.mode
                ))
        }
    }

    @Test(
        "a recovered set (generation g+1) signs under the same Y; a share of the old generation cannot take part",
        arguments: Curve.allCases,
        [RoundTripTests.Layout(threshold: 2, parties: 2), RoundTripTests.Layout(threshold: 2, parties: 3)])
    func recoveredSetSigns(curve: Curve, layout: RoundTripTests.Layout) async throws {
        let original = try Self.dkg(curve, layout)
        let custodian = SealingKeyPair()
        let secret = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: Array(original.prefix(layout.threshold)), method: .cloudKey, secret: secret,
            custodianPublicKey: custodian.publicKey, keyId: "k")
        let recovered = try await OfflineRecovery.recover(
            cipherText: backup.cipherText.base64, secret: secret, custodianShares: backup.custodianShares.map(\.json),
            custodianKey: custodian)
        #expect(recovered[0].generation == 1)
        let message = Array("after recovery".utf8)
        let mode = SigningMode.default(for: curve)
        let (package, signature) = try ThresholdSigning.sign(
            shares: Array(recovered.prefix(layout.threshold)), message: message)
        #expect(package.publicKey == original[0].publicKey)
        #expect(
            SignatureVerifier.verify(
                signature: signature, message: message, publicKey: original[0].publicKey, mode: mode))

        // The lost device's share (generation 0) beside the custodian's new one: refused before any nonce is drawn.
        let mixed = [original[0], recovered[1]]
        let error = #expect(throws: ShareRecoveryError.self) {
            _ = try ThresholdSigning.sign(shares: mixed, message: message)
        }
        #expect(error?.code == .invalidParameters)
        #expect(error?.reason.contains("generation") == true)

        // An old share asked to sign a package of the new set refuses too.
        let oldSigner = try SigningParty(share: original[0], mode: mode)
        let newSigner = try SigningParty(share: recovered[1], mode: mode)
        let oldNonce = oldSigner.commit(), newNonce = newSigner.commit()
        let newPackage = try SigningPackage(
            signingSet: recovered[1], message: message, mode: mode,
            commitments: [1: oldNonce.commitment, 2: newNonce.commitment])
        #expect(throws: ShareRecoveryError.self) { _ = try oldSigner.sign(nonce: oldNonce, package: newPackage) }
    }

    @Test("a nonce signs once: a second signature with it is nonceReused", arguments: combinations)
    func nonceReuse(combination: Combination) throws {
        let shares = try Self.dkg(combination.curve, .init(threshold: 2, parties: 2))
        let signers = try shares.map { try SigningParty(share: $0, mode: combination.mode) }
        let nonces = signers.map { $0.commit() }
        let package = try SigningPackage(
            signingSet: shares[0], message: [1, 2, 3], mode: combination.mode,
            commitments: [1: nonces[0].commitment, 2: nonces[1].commitment])
        _ = try signers[0].sign(nonce: nonces[0], package: package)
        let other = try SigningPackage(
            signingSet: shares[0], message: [4, 5, 6], mode: combination.mode,
            commitments: [1: nonces[0].commitment, 2: nonces[1].commitment])
        let error = #expect(throws: ShareRecoveryError.self) {
            _ = try signers[0].sign(nonce: nonces[0], package: other)
        }
        #expect(error?.code == .nonceReused)
        // A discarded nonce (an aborted session) cannot sign either.
        nonces[1].discard()
        #expect(throws: ShareRecoveryError.self) { _ = try signers[1].sign(nonce: nonces[1], package: package) }
    }

    @Test("a bad signature share is refused before aggregation, naming its signer", arguments: combinations)
    func badSignatureShare(combination: Combination) throws {
        let shares = try Self.dkg(combination.curve, .init(threshold: 2, parties: 3))
        let signers = try shares.prefix(2).map { try SigningParty(share: $0, mode: combination.mode) }
        let nonces = signers.map { $0.commit() }
        let package = try SigningPackage(
            signingSet: shares[0], message: [9], mode: combination.mode,
            commitments: [1: nonces[0].commitment, 2: nonces[1].commitment])
        var signatureShares = [
            1: try signers[0].sign(nonce: nonces[0], package: package),
            2: try signers[1].sign(nonce: nonces[1], package: package),
        ]
        #expect(
            try package.aggregate(signatureShares: signatureShares).count
                == combination.mode.signatureCount(on: combination.curve))
        signatureShares[2] = signatureShares[2]! + Scalar(1, curve: combination.curve)
        let error = #expect(throws: ShareRecoveryError.self) {
            _ = try package.aggregate(signatureShares: signatureShares)
        }
        #expect(error?.code == .invalidSignatureShare)
        #expect(error?.party == 2)
    }

    @Test("bip340 is refused on ed25519, backup shares and public descriptions do not sign")
    func refusedSigners() throws {
        let ed = try Self.dkg(.ed25519, .init(threshold: 2, parties: 2))
        #expect(throws: ShareRecoveryError.self) { _ = try SigningParty(share: ed[0], mode: .bip340) }
        #expect(throws: ShareRecoveryError.self) {
            _ = try SigningParty(share: ed[0].publicDescription, mode: .rfc9591)
        }
        let backup = try Resharing.reshare(ed, newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
        #expect(throws: ShareRecoveryError.self) { _ = try SigningParty(share: backup[0], mode: .rfc9591) }
    }
}
