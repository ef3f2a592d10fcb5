// Fuzz target: an ECDSA signer's stored round state (docs/ecdsa.md "Round states"), read by
// `ECDSASigningParty(share:signers:setups:digest:path:state:)` for a fixed 2-of-2 signing session.
//
// Input: a round state, except that bytes 2..<34 (the hash binding the state to its session's public
// inputs) are replaced by the fixed session's before reading, so the fuzzer reaches the fields
// behind that check; a state of another session is refused there by one comparison.
// Invariants: a state that parses exports exactly the bytes it was read from; one that does not is
// refused with `malformedRecord` only. scripts/fuzz-seeds.py builds seeds of each phase's layout.
import FuzzSupport
import ShareCrypto
import ShareRecovery

/// Party 1 of a fixed 2-of-2 secp256k1 set, its pair setup with party 2, and its session's binding
/// hash (read from a real exported state).
struct Fixture {
    let share: ShareRecord
    let setups: [PairSetup]
    let digest = [UInt8](repeating: 7, count: 32)
    let inputTag: [UInt8]

    init() {
        do {
            let random = DeterministicRandom(seed: Array("fuzz-ecdsa-round-state".utf8))
            let parameters = try DKGParameters(curve: .secp256k1, walletId: "fuzz", threshold: 2, parties: 2)
            let set = try DistributedKeyGeneration.run(parameters: parameters, using: random)
            share = set[0]
            setups = try ThresholdECDSA.pairSetups(shares: set)[1]!
            let party = try ECDSASigningParty(share: share, signers: [1, 2], setups: setups, digest: digest)
            _ = try party.round1()
            inputTag = Array(try party.exportState().revealedBytes()[2..<34])
        } catch {
            fuzzFailure("fixture: \(error)")
        }
    }
}

let fixture = Fixture()

runFuzzer { input in
    guard input.count >= 34 else { return }
    let state = Array(input[0..<2]) + fixture.inputTag + input[34...]
    fuzzRoundTrip(state, "round state") {
        let party = try ECDSASigningParty(
            share: fixture.share, signers: [1, 2], setups: fixture.setups, digest: fixture.digest,
            state: SecureBytes(copying: $0))
        return try party.exportState().revealedBytes()
    } isDocumented: {
        ($0 as? ShareRecoveryError)?.code == .malformedRecord
    }
}
