// Fuzz target: the DKG and signing messages a party reads from the network (docs/formats.md §10–§11),
// and the protocol states a server reads back from storage (DKG round 2, the resharing custodian's).
//
// Input: one mode byte, then the bytes. Mode bit 0 picks the curve (clear: secp256k1, set: ed25519);
// bits 1–3 pick what the bytes are: 0 a DKG round-1 broadcast (JSON), which a fixed party then
// receives; 1 a nonce commitment (JSON), which then enters a signing package of a fixed set; 2 a
// signature share (JSON string), which is then aggregated; 3 a serialised DKG round-2 state; 4 a
// serialised resharing custodian `Opened` state; 5 its `Pending` state (the curve bit is unused for
// 4 and 5: the bytes name their curve); 6 and 7 nothing.
// scripts/fuzz-seeds.py builds seeds from Vectors/dkg.json and Vectors/signing.json.
import FuzzSupport
import ShareCrypto
import ShareRecovery

/// The codes a reader of these messages may answer with; any other is a bug in its error mapping.
let allowedCodes: Set<ShareRecoveryError.Code> = [
    .malformedInput, .malformedRecord, .invalidParameters, .invalidScalar, .invalidPoint, .dkgProofFailed,
    .subShareCheckFailed, .invalidSignatureShare,
]

/// What the resharing custodian's state readers may answer with: the record codes (a plan's old set, a
/// pending share) and the plan's own.
let resharingStateCodes: Set<ShareRecoveryError.Code> = [
    .malformedInput, .malformedRecord, .unsupportedVersion, .invalidParameters, .invalidScalar, .invalidPoint,
    .invalidShare,
    .publicKeyMismatch,
]

/// Fixed parties per curve, made once: a DKG party 1 of 2-of-2 and a signing set with party 1's nonce.
struct Fixture {
    let party: DKGParty
    let set: [ShareRecord]
    let signers: [SigningParty]

    init(curve: Curve) {
        do {
            let random = DeterministicRandom(seed: Array("fuzz-protocol-messages \(curve)".utf8))
            let parameters = try DKGParameters(curve: curve, walletId: "fuzz", threshold: 2, parties: 2)
            party = try DKGParty(parameters: parameters, partyIndex: 1, using: random)
            set = try DistributedKeyGeneration.run(parameters: parameters, using: random)
            signers = try set.map { try SigningParty(share: $0, mode: .rfc9591) }
        } catch {
            fuzzFailure("fixture: \(error)")
        }
    }
}

let fixtures: [Curve: Fixture] = [.secp256k1: Fixture(curve: .secp256k1), .ed25519: Fixture(curve: .ed25519)]

func expectTyped(_ codes: Set<ShareRecoveryError.Code> = allowedCodes, _ body: () throws(ShareRecoveryError) -> Void) {
    do throws(ShareRecoveryError) {
        try body()
    } catch {
        fuzzCheck(codes.contains(error.code), "unexpected code \(error.code): \(error.reason)")
    }
}

runFuzzer { input in
    guard let mode = input.first else { return }
    let curve: Curve = mode & 1 == 0 ? .secp256k1 : .ed25519
    let fixture = fixtures[curve]!
    let body = Array(input.dropFirst())
    switch (mode >> 1) & 7 {
    case 0:
        expectTyped { () throws(ShareRecoveryError) in
            guard let value = try? StrictJSON.parse(body) else { return }
            let message = try ProtocolWire.decodeRound1(value, sender: 2, curve: curve)
            // A broadcast that parses is either refused by the receiving party or accepted with its proof.
            let (state, outgoing) = try fixture.party.receive(round1: [message])
            fuzzCheck(outgoing.count == 1 && state.round1.count == 2, "a received round produced the wrong messages")
            fuzzCheck(
                message.proof.verify(index: 2, publicCommitment: message.commitments[0]),
                "an unverified proof was accepted")
        }
    case 1:
        expectTyped { () throws(ShareRecoveryError) in
            guard let value = try? StrictJSON.parse(body) else { return }
            let commitment = try ProtocolWire.decodeCommitment(value, party: 2, curve: curve)
            let nonce = fixture.signers[0].commit()
            let package = try SigningPackage(
                signingSet: fixture.set[0], message: body, mode: .rfc9591,
                commitments: [1: nonce.commitment, 2: commitment])
            // Signing succeeds for any valid commitment (or refuses an identity group commitment).
            _ = try fixture.signers[0].sign(nonce: nonce, package: package)
        }
    case 2:
        expectTyped { () throws(ShareRecoveryError) in
            guard let value = try? StrictJSON.parse(body) else { return }
            let share = try ProtocolWire.decodeSignatureShare(value, party: 2, curve: curve)
            let nonces = fixture.signers.map { $0.commit() }
            let package = try SigningPackage(
                signingSet: fixture.set[0], message: [1], mode: .rfc9591,
                commitments: [1: nonces[0].commitment, 2: nonces[1].commitment])
            let own = try fixture.signers[0].sign(nonce: nonces[0], package: package)
            // A share not made with party 2's nonce must not aggregate.
            do throws(ShareRecoveryError) {
                _ = try package.aggregate(signatureShares: [1: own, 2: share])
                fuzzFailure("a signature share made without the signer's nonce aggregated")
            } catch {
                fuzzCheck(
                    error.code == .invalidSignatureShare && error.party == 2,
                    "aggregation blamed \(String(describing: error.party))")
            }
        }
    case 3:
        expectTyped { () throws(ShareRecoveryError) in
            let state = try DKGRound2State(serialized: SecureBytes(copying: body))
            fuzzCheck(state.serialized().revealedBytes() == body, "a DKG state does not re-serialise to its bytes")
        }
    case 4:
        expectTyped(resharingStateCodes) { () throws(ShareRecoveryError) in
            let state = try ResharingCustodian.Opened(serialized: SecureBytes(copying: body))
            fuzzCheck(
                state.serialized().revealedBytes() == body,
                "an opened resharing state does not re-serialise to its bytes")
        }
    case 5:
        expectTyped(resharingStateCodes) { () throws(ShareRecoveryError) in
            let state = try ResharingCustodian.Pending(serialized: SecureBytes(copying: body))
            let again = try state.serialized().revealedBytes()
            fuzzCheck(again == body, "a pending resharing state does not re-serialise to its bytes")
        }
    default:
        return
    }
}
