import ShareCrypto
import ShareRecovery
import TestSupport
import Testing

@Suite("Distributed key generation (docs/formats.md §10)")
struct DKGTests {
    private static let zcashFiles = [
        "frost/zcash-frost/secp256k1/vectors_dkg.json", "frost/zcash-frost/ed25519/vectors_dkg.json",
    ]

    private struct ZcashRun {
        let parameters: DKGParameters
        let curve: Curve
        let file: ZcashDKGFile
        /// Each participant's round-1 broadcast as published (commitments and proof).
        let broadcasts: [DKGRound1Message]

        init(_ path: String) throws {
            file = try ExternalVectors.load(path, as: ZcashDKGFile.self)
            curve = try #require(Curve(name: file.config.group.lowercased()))
            parameters = try DKGParameters(
                curve: curve, walletId: "zcash-frost", threshold: file.config.MIN_PARTICIPANTS,
                parties: file.config.MAX_PARTICIPANTS)
            broadcasts = try file.inputs.participants.map { [curve] participant in
                try DKGRound1Message(
                    sender: participant.identifier,
                    commitments: participant.vss_commitments.map {
                        try Point(rawRepresentation: $0.bytes, curve: curve)
                    },
                    proof: DKGProof(
                        rawRepresentation: participant.proof_of_knowledge.bytes, curve: curve,
                        party: participant.identifier))
            }
        }

        func scalar(_ hex: HexBytes) throws -> Scalar { try Scalar(rawRepresentation: hex.bytes, curve: curve) }

        /// Party i from its published polynomial; the proof nonce is not published, so its own proof differs.
        func party(_ participant: ZcashDKGFile.Participant) throws -> DKGParty {
            try DKGParty(
                parameters: parameters, partyIndex: participant.identifier,
                coefficients: [scalar(participant.signing_key), scalar(participant.coefficient)],
                proofNonce: Scalar.random(on: curve))
        }

        /// The round-2 messages participant `receiver` got, as published.
        func received(by receiver: ZcashDKGFile.Participant) throws -> [DKGRound2Message] {
            try receiver.signing_shares.map { sender, share in
                DKGRound2Message(
                    sender: try #require(Int(sender)), receiver: receiver.identifier, subShare: try scalar(share))
            }
        }
    }

    @Test(
        "zcash-frost vectors_dkg: proofs verify, sub-shares, signing shares, verifying shares and key reproduce",
        arguments: zcashFiles)
    func zcashVectors(path: String) throws {
        let run = try ZcashRun(path)
        var count = 0
        for participant in run.file.inputs.participants {
            let party = try run.party(participant)
            let own = try #require(run.broadcasts.first { $0.sender == participant.identifier })
            // Our polynomial gives the published commitments, and the published proof verifies.
            #expect(party.round1Message.commitments == own.commitments, "party \(participant.identifier)")
            #expect(own.proof.verify(index: participant.identifier, publicCommitment: own.commitments[0]))
            #expect(
                party.round1Message.proof.verify(index: participant.identifier, publicCommitment: own.commitments[0]))

            let (state, outgoing) = try party.receive(
                round1: run.broadcasts.filter { $0.sender != participant.identifier })
            for message in outgoing {
                let receiver = try #require(run.file.inputs.participants.first { $0.identifier == message.receiver })
                #expect(
                    message.subShare
                        == (try run.scalar(try #require(receiver.signing_shares[String(participant.identifier)]))))
            }
            let share = try state.finish(round2: try run.received(by: participant))
            #expect(share.secret == (try run.scalar(participant.signing_share)))
            #expect(try share.publicShare.rawRepresentation == participant.verifying_share.bytes)
            #expect(share.publicKey.rawRepresentation == run.file.inputs.verifying_key.bytes)
            #expect(share.generation == 0 && share.kind == .signing)
            count += 1
        }
        #expect(count == run.file.config.MAX_PARTICIPANTS)
        print("\(path): \(count) parties reproduced")
    }

    @Test(
        "a proof bound to another index, or a flipped μ, fails with dkgProofFailed naming the sender",
        arguments: zcashFiles)
    func badProofs(path: String) throws {
        let run = try ZcashRun(path)
        let receiver = try run.party(run.file.inputs.participants[0])
        let victim = run.broadcasts[1]
        // The proof of party 3 presented as party 2's: the challenge binds the index.
        let replayed = DKGRound1Message(
            sender: victim.sender, commitments: run.broadcasts[2].commitments, proof: run.broadcasts[2].proof)
        var flipped = victim.proof.rawRepresentation
        flipped[run.curve == .secp256k1 ? flipped.count - 1 : run.curve.pointCount] ^= 1
        let tampered = DKGRound1Message(
            sender: victim.sender, commitments: victim.commitments,
            proof: try DKGProof(rawRepresentation: flipped, curve: run.curve, party: victim.sender))
        for bad in [replayed, tampered] {
            let error = #expect(throws: ShareRecoveryError.self) {
                _ = try receiver.receive(round1: [bad, run.broadcasts[2]])
            }
            #expect(error?.code == .dkgProofFailed)
            #expect(error?.party == victim.sender)
        }
    }

    @Test("a sub-share off by one fails with subShareCheckFailed naming the sender", arguments: zcashFiles)
    func badSubShare(path: String) throws {
        let run = try ZcashRun(path)
        let participant = run.file.inputs.participants[0]
        let (state, _) = try run.party(participant).receive(round1: Array(run.broadcasts.dropFirst()))
        let honest = try run.received(by: participant).sorted { $0.sender < $1.sender }
        for (position, message) in honest.enumerated() {
            var messages = honest
            messages[position] = DKGRound2Message(
                sender: message.sender, receiver: message.receiver,
                subShare: message.subShare + Scalar(1, curve: run.curve))
            let error = #expect(throws: ShareRecoveryError.self) { _ = try state.finish(round2: messages) }
            #expect(error?.code == .subShareCheckFailed)
            #expect(error?.party == message.sender)
        }
    }

    @Test("missing, duplicate and misaddressed messages are refused before anything is combined")
    func malformedRounds() throws {
        let parameters = try DKGParameters(curve: .secp256k1, walletId: "w", threshold: 2, parties: 3)
        let parties = try (1...3).map { try DKGParty(parameters: parameters, partyIndex: $0) }
        let broadcasts = parties.map(\.round1Message)
        #expect(throws: ShareRecoveryError.self) { _ = try parties[0].receive(round1: [broadcasts[1]]) }
        #expect(throws: ShareRecoveryError.self) {
            _ = try parties[0].receive(round1: [broadcasts[1], broadcasts[1], broadcasts[2]])
        }
        let rounds = try parties.map { try $0.receive(round1: broadcasts) }
        let toParty1 = rounds.flatMap(\.messages).filter { $0.receiver == 1 }
        let toParty2 = rounds.flatMap(\.messages).filter { $0.receiver == 2 }
        #expect(throws: ShareRecoveryError.self) { _ = try rounds[0].state.finish(round2: Array(toParty1.dropLast())) }
        #expect(throws: ShareRecoveryError.self) { _ = try rounds[0].state.finish(round2: toParty1 + [toParty1[0]]) }
        #expect(throws: ShareRecoveryError.self) { _ = try rounds[0].state.finish(round2: toParty2) }
        #expect(try rounds[0].state.finish(round2: toParty1).partyIndex == 1)
    }

    @Test(
        "every party ends with a valid §4 share of one set with the §10 setId, and any t of them reshare",
        arguments: Curve.allCases, [(2, 2), (2, 3), (3, 5)])
    func endToEnd(curve: Curve, shape: (threshold: Int, parties: Int)) throws {
        let parameters = try DKGParameters(
            curve: curve, walletId: "wallet-dkg", threshold: shape.threshold, parties: shape.parties)
        let shares = try DistributedKeyGeneration.run(parameters: parameters)
        #expect(shares.map(\.partyIndex) == Array(1...shape.parties))
        for share in shares {
            #expect(share.isSameSet(as: shares[0]))
            // The public checking initialiser reruns every §4 check, x_i·G == X_i included.
            _ = try ShareRecord(
                walletId: share.walletId, curve: share.curve, kind: share.kind, threshold: share.threshold,
                parties: share.parties,
                partyIndex: share.partyIndex, generation: share.generation, setId: share.setId, secret: share.secret,
                commitments: share.commitments)
            // Round-trips through both §4 encodings.
            #expect(try ShareRecord(binary: share.binary()) == share)
        }
        var preimage =
            Array("share-recovery v1 dkg".utf8) + [curve.rawValue, UInt8(shape.threshold), UInt8(shape.parties)]
        for commitment in shares[0].commitments { preimage += commitment.rawRepresentation }
        #expect(shares[0].setId.bytes == Array(SHA256.hash(preimage).prefix(16)))
        // Any t shares can deal a new set that keeps Y: the set is an ordinary signing set.
        let backup = try Resharing.reshare(
            Array(shares.suffix(shape.threshold)), newThreshold: 2, newParties: 2, newKind: .backup, newGeneration: 0)
        #expect(backup[0].publicKey == shares[0].publicKey)
    }
}
