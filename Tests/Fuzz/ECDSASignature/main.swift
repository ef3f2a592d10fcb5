// Fuzz target: the ECDSA signature encodings a verifier reads (docs/formats.md §12): strict DER,
// compact `r || s` and `r || s || v`.
//
// Input: a selector byte (0 DER, 1 compact, 2 `r || s || v`, others nothing), a recovery-id byte
// (DER and compact take it as given; `r || s || v` carries its own), then the encoding.
// Invariants: a signature that parses has a low s and reads back from each of its encodings as
// itself; it writes back exactly the bytes it was read from exactly when it was not normalised, and
// it was normalised (high s replaced by n − s) exactly when its recovery id was flipped. Refusals are
// `invalidEncoding`, `invalidLength`, `invalidScalar` or `invalidParameters` only.
// scripts/fuzz-seeds.py builds seeds with a low and a high s.
import FuzzSupport
import ShareCrypto

let documented: Set<ShareCryptoError.Code> = [.invalidEncoding, .invalidLength, .invalidScalar, .invalidParameters]

/// n/2, the largest low s.
let halfOrder = Hex.decode("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0")!

runFuzzer { input in
    guard input.count >= 2, input[0] <= 2 else { return }
    let givenId = input[1]
    let body = Array(input[2...])
    let signature: ECDSASignature
    let written: [UInt8]
    let claimedId: UInt8
    do {
        switch input[0] {
        case 0:
            signature = try ECDSASignature(der: body, recoveryId: givenId)
            (written, claimedId) = (signature.der, givenId)
        case 1:
            signature = try ECDSASignature(compact: body, recoveryId: givenId)
            (written, claimedId) = (signature.compact, givenId)
        default:
            signature = try ECDSASignature(recoverable: body)
            (written, claimedId) = (signature.recoverable, body[64])
        }
    } catch {
        fuzzCheck(
            (error as? ShareCryptoError).map { documented.contains($0.code) } ?? false, "undocumented refusal \(error)")
        return
    }
    fuzzCheck(signature.r.count == 32 && signature.s.count == 32 && signature.recoveryId <= 1, "bad signature fields")
    fuzzCheck(!halfOrder.lexicographicallyPrecedes(signature.s), "a parsed signature has a high s")
    let normalised = signature.recoveryId != claimedId
    fuzzCheck(
        (written == body) == !normalised,
        "a signature writes back its bytes \(written == body) although it was normalised \(normalised)")
    do {
        let fromDER = try ECDSASignature(der: signature.der, recoveryId: signature.recoveryId)
        let fromCompact = try ECDSASignature(compact: signature.compact, recoveryId: signature.recoveryId)
        let fromRecoverable = try ECDSASignature(recoverable: signature.recoverable)
        fuzzCheck(
            fromDER == signature && fromCompact == signature && fromRecoverable == signature,
            "a parsed signature does not read back from its own encodings as itself")
    } catch {
        fuzzFailure("a parsed signature's own encoding is refused: \(error)")
    }
}
