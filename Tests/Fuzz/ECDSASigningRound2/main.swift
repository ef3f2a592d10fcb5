// Fuzz target: the ECDSA signing round-2 message (docs/ecdsa.md "Signing": the opening of R, the
// public share, ψ, Γ^u, Γ^v and the multiplication reply), read by the parser the signing session
// uses. Input: the message bytes. Invariants: a message that parses writes back exactly its bytes;
// one that does not is refused with `invalidEncoding` only.
// scripts/fuzz-seeds.py builds seeds in the message's layout.
import FuzzSupport
import ShareCrypto

runFuzzer { input in
    fuzzRoundTrip(input, "signing round 2") {
        try ECDSAMessage.SigningRound2($0, from: 2).bytes
    } isDocumented: {
        ($0 as? ShareCryptoError)?.code == .invalidEncoding
    }
}
