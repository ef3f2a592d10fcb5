// Fuzz target: a stored ECDSA pair setup's byte form (docs/ecdsa.md "Pair setup"), read by
// `PairSetup(rawRepresentation:)` as a wallet reads it back after unsealing. Input: the bytes.
// Invariants: a setup that parses is not discarded and writes back exactly its bytes; bytes that
// do not parse are refused with `malformedRecord` only.
// scripts/fuzz-seeds.py builds seeds in the layout.
import FuzzSupport
import ShareCrypto
import ShareRecovery

runFuzzer { input in
    fuzzRoundTrip(input, "pair setup byte form") {
        let setup = try PairSetup(rawRepresentation: SecureBytes(copying: $0))
        fuzzCheck(!setup.isDiscarded && setup.partyIndex != 0, "a parsed pair setup is unusable")
        return try setup.rawRepresentation().revealedBytes()
    } isDocumented: {
        ($0 as? ShareRecoveryError)?.code == .malformedRecord
    }
}
