// Fuzz target: share record parsing, binary and JSON (docs/formats.md §4).
//
// Input: one mode byte (bit 0 clear: a binary record follows; set: JSON text follows), then the
// record. scripts/fuzz-seeds.py builds seeds from Vectors/share-record.json.
import FuzzSupport
import ShareCrypto
import ShareRecovery

/// The codes §4 allows; any other code is a bug in the readers' error mapping.
let recordCodes: Set<ShareRecoveryError.Code> = [
    .malformedRecord, .unsupportedVersion, .invalidParameters, .invalidScalar, .invalidPoint, .invalidShare,
    .publicKeyMismatch,
]

/// Checks that every form of `record` reads back as the same value.
func checkRoundTrips(_ record: ShareRecord) {
    let withSecret = record.secret != nil
    do throws(ShareRecoveryError) {
        let fromJSON = try ShareRecord(json: record.json(includingSecret: withSecret))
        fuzzCheck(fromJSON == record, "record → JSON → record differs")
        let publicOnly = try ShareRecord(json: record.json(includingSecret: false))
        fuzzCheck(publicOnly == record.publicDescription && publicOnly.secret == nil, "public JSON round trip differs")
        if withSecret {
            let fromBinary = try ShareRecord(binary: try record.binary())
            fuzzCheck(fromBinary == record, "record → binary → record differs")
        }
    } catch {
        fuzzFailure("re-reading a written record failed: \(error.code)")
    }
}

runFuzzer { input in
    guard let mode = input.first else { return }
    let body = Array(input.dropFirst())
    if mode & 1 == 0 {
        let record: ShareRecord
        do throws(ShareRecoveryError) {
            record = try ShareRecord(binary: SecureBytes(copying: body))
        } catch {
            fuzzCheck(
                recordCodes.contains(error.code) && error.code != .publicKeyMismatch,
                "binary: unexpected code \(error.code)")
            return
        }
        fuzzCheck(record.secret != nil, "a binary record without a secret was accepted")
        // The binary form is exact (no trailing bytes, one encoding per value), so it re-encodes to the input.
        fuzzCheck((try? record.binary().revealedBytes()) == body, "accepted binary record is not canonical")
        checkRoundTrips(record)
    } else {
        let record: ShareRecord
        do throws(ShareRecoveryError) {
            record = try ShareRecord(json: String(decoding: body, as: UTF8.self))
        } catch {
            fuzzCheck(recordCodes.contains(error.code), "JSON: unexpected code \(error.code)")
            return
        }
        checkRoundTrips(record)
    }
}
