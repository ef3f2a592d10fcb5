// Fuzz target: the ECDSA pair setup's round-1 message (docs/ecdsa.md "Pair setup"), read by the
// parser the setup role uses. Input: the message bytes. Invariants: a message that parses writes
// back exactly its bytes; one that does not is refused with `invalidEncoding` only.
// scripts/fuzz-seeds.py builds seeds in the message's layout.
import FuzzSupport
import ShareCrypto

runFuzzer { input in
    fuzzRoundTrip(input, "pair setup round 1") {
        try ECDSAMessage.SetupRound1($0, from: 2).bytes
    } isDocumented: {
        ($0 as? ShareCryptoError)?.code == .invalidEncoding
    }
}
