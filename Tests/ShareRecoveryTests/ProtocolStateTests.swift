import ShareCrypto
import ShareRecovery
import Testing

/// Protocol state at rest: what a server seals between the two requests of a DKG or signing session.
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
}
