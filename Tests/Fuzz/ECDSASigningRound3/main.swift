// Fuzz target: the ECDSA signing round-3 broadcast (docs/ecdsa.md "Signing": u and w), read by the
// parser the signing session uses. Input: the broadcast bytes. Invariants: a broadcast that parses
// writes back exactly its bytes; one that does not is refused with `invalidEncoding` only.
// scripts/fuzz-seeds.py builds seeds in the broadcast's layout.
import FuzzSupport
import ShareCrypto

runFuzzer { input in
    fuzzRoundTrip(input, "signing round 3") {
        try ECDSAMessage.SigningRound3($0, from: 2).bytes
    } isDocumented: {
        ($0 as? ShareCryptoError)?.code == .invalidEncoding
    }
}
