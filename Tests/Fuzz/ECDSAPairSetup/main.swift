// Fuzz target: a stored ECDSA pair setup's byte form (docs/ecdsa.md "Pair setup at rest"), read by
// `PairSetup(rawRepresentation:)` as a wallet reads it back after unsealing. Input: the bytes.
// Invariants: a setup that parses is not discarded and writes back exactly its bytes, and reads
// back the same parties; bytes that do not parse are refused with `malformedRecord` only.
// scripts/fuzz-seeds.py builds seeds in the layout.
import FuzzSupport
import ShareCrypto
import ShareRecovery

runFuzzer { input in
    fuzzRoundTrip(input, "pair setup byte form") {
        let setup = try PairSetup(rawRepresentation: SecureBytes(copying: $0))
        fuzzCheck(!setup.isDiscarded && setup.partyIndex != 0, "a parsed pair setup is unusable")
        let written = try setup.rawRepresentation().revealedBytes()
        let again = try PairSetup(rawRepresentation: SecureBytes(copying: written))
        fuzzCheck(
            again.partyIndex == setup.partyIndex && again.peerIndex == setup.peerIndex
                && again.generation == setup.generation, "a pair setup reads back other parties")
        return written
    } isDocumented: {
        ($0 as? ShareRecoveryError)?.code == .malformedRecord
    }
}
