import ShareCrypto
import ShareRecovery
import Testing

@Suite("Threshold ECDSA by DKLs23 (docs/formats.md §12)")
struct ECDSASigningTests {
    private static func dkg(threshold: Int, parties: Int, walletId: String) throws -> [ShareRecord] {
        try DistributedKeyGeneration.run(
            parameters: DKGParameters(curve: .secp256k1, walletId: walletId, threshold: threshold, parties: parties))
    }

    private static let digest = SHA256.hash(Array("transfer 1 ether to bob".utf8))

    private static func expectOrdinary(_ signature: ECDSASignature, key: Point, digest: [UInt8] = digest) throws {
        #expect(signature.isValid(digest: digest, publicKey: key))
        let recovered = try signature.recoverPublicKey(digest: digest)
        #expect(recovered == key)
        #expect(try EthereumAddress.checksummed(recovered) == (try EthereumAddress.checksummed(key)))
        // libsecp256k1 refuses a high s, so a valid signature is low-s; the DER form says the same.
        #expect(try ECDSASignature(der: signature.der, recoveryId: signature.recoveryId) == signature)
    }

    @Test("2-of-2, and every pair of a 2-of-3 set, sign a digest that libsecp256k1 verifies and recovers to Y")
    func everyPairSigns() throws {
        let pair = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-2of2")
        let set = try Self.dkg(threshold: 2, parties: 3, walletId: "ecdsa-2of3")
        for signers in [pair, [set[0], set[1]], [set[0], set[2]], [set[1], set[2]]] {
            let setups = try ThresholdECDSA.pairSetups(shares: signers)
            let (signature, key) = try ThresholdECDSA.sign(shares: signers, setups: setups, digest: Self.digest)
            #expect(key == signers[0].publicKey)
            try Self.expectOrdinary(signature, key: key)
        }
    }

    @Test("a non-hardened BIP-32 child path signs under the child key, not under Y")
    func childPath() throws {
        let shares = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-child")
        let path = try DerivationPath("m/0/1")
        let setups = try ThresholdECDSA.pairSetups(shares: shares)
        let (signature, key) = try ThresholdECDSA.sign(shares: shares, setups: setups, digest: Self.digest, path: path)
        #expect(key == (try DerivedKey(walletPublicKey: shares[0].publicKey, path: path)).publicKey)
        #expect(key != shares[0].publicKey)
        try Self.expectOrdinary(signature, key: key)
        #expect(!signature.isValid(digest: Self.digest, publicKey: shares[0].publicKey))
    }

    @Test("shares of two sets are refused; a setup made before a share's generation is stale")
    func setsAndGenerations() throws {
        let first = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-sets")
        let second = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-sets")
        #expect(throws: ShareRecoveryError(.inconsistentShares, "")) {
            try ThresholdECDSA.pairSetups(shares: [first[0], second[1]])
        }
        // A setup of the first set presented with a share of the second: another set is stale too.
        let setups = try ThresholdECDSA.pairSetups(shares: first)
        #expect(throws: ShareRecoveryError(.pairSetupStale, "")) {
            try ECDSASigningParty(share: second[0], signers: [1, 2], setups: setups[1]!, digest: Self.digest)
        }
    }

    @Test(
        "a recovered set (generation g+1) refuses the old setups and signs under the same address after a fresh setup")
    func recoveredSet() async throws {
        let original = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-recovered")
        let custodian = SealingKeyPair()
        let secret = BackupSecret.keyMaterial(SystemRandom().secureBytes(count: 32))
        let backup = try BackupCreation.create(
            signingShares: original, method: .cloudKey, secret: secret, custodianPublicKey: custodian.publicKey,
            keyId: "k")
        let recovered = try await OfflineRecovery.recover(
            cipherText: backup.cipherText.base64, secret: secret, custodianShares: backup.custodianShares.map(\.json),
            custodianKey: custodian)
        let newShares = Array(recovered.prefix(2))
        #expect(newShares[0].generation == original[0].generation + 1)
        let oldSetups = try ThresholdECDSA.pairSetups(shares: original)
        #expect(throws: ShareRecoveryError(.pairSetupStale, "")) {
            try ThresholdECDSA.sign(shares: newShares, setups: oldSetups, digest: Self.digest)
        }
        let (signature, key) = try ThresholdECDSA.sign(
            shares: newShares, setups: try ThresholdECDSA.pairSetups(shares: newShares), digest: Self.digest)
        #expect(try EthereumAddress.checksummed(key) == (try EthereumAddress.checksummed(original[0].publicKey)))
        try Self.expectOrdinary(signature, key: key)
    }

    @Test("a stored setup reloads from its byte form and signs; a round state signs once")
    func storedSetupAndOneUse() throws {
        let shares = try Self.dkg(threshold: 2, parties: 2, walletId: "ecdsa-stored")
        let setups = try ThresholdECDSA.pairSetups(shares: shares)
        let reloaded = try setups.mapValues { list in
            try list.map { try PairSetup(rawRepresentation: $0.rawRepresentation()) }
        }
        let (signature, key) = try ThresholdECDSA.sign(shares: shares, setups: reloaded, digest: Self.digest)
        try Self.expectOrdinary(signature, key: key)
        let party = try ECDSASigningParty(share: shares[0], signers: [1, 2], setups: setups[1]!, digest: Self.digest)
        _ = try party.round1()
        #expect(throws: ShareRecoveryError(.nonceReused, "")) { try party.round1() }
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
            try PairSetup(rawRepresentation: SecureBytes(copying: [1, 2, 3]))
        }
    }

    @Test("round states leave and re-enter through their byte form between rounds; an exported state is spent")
    func roundStatesRoundTrip() throws {
        let shares = try Self.dkg(threshold: 2, parties: 3, walletId: "ecdsa-states")
        let signers = [shares[0], shares[2]]
        let indices = signers.map(\.partyIndex)
        let setups = try ThresholdECDSA.pairSetups(shares: signers)
        var parties = [Int: ECDSASigningParty]()
        for share in signers {
            parties[share.partyIndex] = try ECDSASigningParty(
                share: share, signers: indices, setups: setups[share.partyIndex]!, digest: Self.digest)
        }
        /// Every party stores its state and continues from the stored bytes.
        func reload() throws {
            for share in signers {
                let old = parties[share.partyIndex]!
                let state = try old.exportState()
                #expect(throws: ShareRecoveryError(.nonceReused, "")) { try old.exportState() }
                parties[share.partyIndex] = try ECDSASigningParty(
                    share: share, signers: indices, setups: setups[share.partyIndex]!, digest: Self.digest, state: state
                )
            }
        }
        var inbox = [Int: [Int: [UInt8]]]()
        for i in indices { for (j, m) in try parties[i]!.round1() { inbox[j, default: [:]][i] = m } }
        try reload()
        var inbox2 = [Int: [Int: [UInt8]]]()
        for i in indices { for (j, m) in try parties[i]!.round2(inbox[i]!) { inbox2[j, default: [:]][i] = m } }
        try reload()
        var broadcasts = [Int: [UInt8]]()
        for i in indices { broadcasts[i] = try parties[i]!.round3(inbox2[i]!) }
        try reload()
        try Self.expectOrdinary(try parties[1]!.signature(broadcasts), key: shares[0].publicKey)
        // A state for another digest does not load.
        let other = try ECDSASigningParty(share: shares[0], signers: indices, setups: setups[1]!, digest: Self.digest)
        _ = try other.round1()
        let state = try other.exportState()
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
            try ECDSASigningParty(
                share: shares[0], signers: indices, setups: setups[1]!, digest: SHA256.hash(Self.digest), state: state)
        }
    }

    @Test("a pair setup party's state leaves and re-enters between its rounds; the setup is the same")
    func pairSetupStatesRoundTrip() throws {
        let shares = try Self.dkg(threshold: 2, parties: 3, walletId: "ecdsa-setup-states")
        let seeds = [1: SecureBytes(copying: [UInt8](repeating: 1, count: 32)), 3: SecureBytes(zeros: 32)]
        func parties() throws -> (PairSetupParty, PairSetupParty) {
            (
                try PairSetupParty(share: shares[0], peer: 3, seed: seeds[1]!),
                try PairSetupParty(share: shares[2], peer: 1, seed: seeds[3]!)
            )
        }
        // Uninterrupted.
        let (a, b) = try parties()
        let aRound2 = try a.round2(peerMessage: b.round1Message)
        let bRound2 = try b.round2(peerMessage: a.round1Message)
        let expected = try a.finish(peerMessage: bRound2).rawRepresentation()
        _ = try b.finish(peerMessage: aRound2)

        // Party 1 stored after each of its rounds: the same messages and the same setup.
        let (first, peer) = try parties()
        let afterRound1 = try first.exportState()
        #expect(throws: ShareRecoveryError(.nonceReused, "")) { try first.exportState() }
        #expect(throws: ShareRecoveryError(.nonceReused, "")) { try first.round2(peerMessage: peer.round1Message) }
        let restored = try PairSetupParty(share: shares[0], peer: 3, state: afterRound1)
        #expect(try restored.round2(peerMessage: peer.round1Message) == aRound2)
        let afterRound2 = try restored.exportState()
        let again = try PairSetupParty(share: shares[0], peer: 3, state: afterRound2)
        #expect(
            try again.finish(peerMessage: try peer.round2(peerMessage: a.round1Message)).rawRepresentation() == expected
        )

        // Another pair, another party or a cut state does not load.
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
            try PairSetupParty(share: shares[0], peer: 2, state: afterRound2)
        }
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
            try PairSetupParty(share: shares[2], peer: 1, state: afterRound2)
        }
        #expect(throws: ShareRecoveryError(.malformedRecord, "")) {
            try PairSetupParty(share: shares[0], peer: 3, state: try afterRound2.slice(0..<(afterRound2.count - 1)))
        }
    }
}
