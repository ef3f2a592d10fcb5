// Fuzz target: SLIP-39 mnemonic decoding and combining (RecoveryKit).
//
// Input: UTF-8 text with one mnemonic per line, as `kit combine` reads it. Every decoded share is
// re-encoded and decoded again; then the shares are combined. scripts/fuzz-seeds.py builds seeds
// from the SLIP-39 reference vectors in Tests/RecoveryKitTests/Vectors/slip39/vectors.json.
import FuzzSupport
import RecoveryKit
import ShareCrypto

/// Combining ends in PBKDF2 with 4 × (2500 << e) iterations; only e ≤ 1 is combined so one
/// execution stays in milliseconds. Every other exponent still goes through decoding.
let maximumCombinedExponent = 1

let decodeCodes: Set<RecoveryKitError.Code> = [
    .invalidWord, .invalidMnemonicLength, .invalidSecretLength, .invalidChecksum, .invalidPadding,
    .invalidGroupThreshold,
]
let combineCodes: Set<RecoveryKitError.Code> = [
    .emptyInput, .mismatchedIdentifier, .mismatchedExtendable, .mismatchedIterationExponent,
    .mismatchedGroupThreshold, .mismatchedGroupCount, .mismatchedShareLength, .mismatchedMemberThreshold,
    .duplicateMemberIndex, .insufficientGroups, .tooManyGroups, .insufficientMembers, .tooManyMembers, .invalidDigest,
]

func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

/// A line's words lowercased and joined by single spaces: the canonical mnemonic text.
func canonical(_ line: ArraySlice<UInt8>) -> [UInt8] {
    let words = line.split(whereSeparator: isWhitespace).map { word in
        word.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
    }
    return Array(words.joined(separator: [0x20]))
}

func sameShare(_ a: SLIP39.Share, _ b: SLIP39.Share) -> Bool {
    a.identifier == b.identifier && a.extendable == b.extendable && a.iterationExponent == b.iterationExponent
        && a.groupIndex == b.groupIndex && a.groupThreshold == b.groupThreshold && a.groupCount == b.groupCount
        && a.memberIndex == b.memberIndex && a.memberThreshold == b.memberThreshold && a.value == b.value
}

runFuzzer { input in
    let shares: [SLIP39.Share]
    do {
        shares = try SLIP39.decodeMnemonics(lines: SecureBytes(copying: input))
    } catch let error as RecoveryKitError {
        fuzzCheck(decodeCodes.contains(error.code), "decode failed with unexpected code \(error.code)")
        return
    } catch {
        fuzzFailure("decode threw an untyped error")
    }

    let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        .filter { !$0.allSatisfy(isWhitespace) }
    fuzzCheck(lines.count == shares.count, "\(shares.count) shares from \(lines.count) non-blank lines")
    for (share, line) in zip(shares, lines) {
        let text = share.mnemonic
        fuzzCheck(text.revealedBytes() == canonical(line), "mnemonic is not the canonical form of its line")
        guard let again = try? SLIP39.Share(mnemonic: text) else { fuzzFailure("a written mnemonic does not decode") }
        fuzzCheck(sameShare(share, again), "share → mnemonic → share differs")
        fuzzCheck(
            share.value.count >= SLIP39.minimumSecretCount && share.value.count % 2 == 0, "bad value length accepted")
        fuzzCheck(share.groupThreshold <= share.groupCount, "group threshold above group count accepted")
    }

    guard let first = shares.first, first.iterationExponent <= maximumCombinedExponent else { return }
    do {
        let secret = try SLIP39.combine(shares)
        fuzzCheck(secret.count == first.value.count, "master secret length differs from the share length")
        // Order must not matter (SLIP-39: shares in any order).
        let reversed = try SLIP39.combine(shares.reversed())
        fuzzCheck(reversed == secret, "combining in another order gives another secret")
    } catch let error as RecoveryKitError {
        fuzzCheck(combineCodes.contains(error.code), "combine failed with unexpected code \(error.code)")
    } catch {
        fuzzFailure("combine threw an untyped error")
    }
}
