// Fuzz target: cipherText parsing and decryption (docs/formats.md §5).
//
// Input: one mode byte (bit 0 clear: the binary envelope follows; set: its base64 text follows),
// 32 bytes of secret, then the envelope. HKDF methods use the 32 bytes as key material; Argon2id
// methods use them, up to the first zero byte, as the password text. scripts/fuzz-seeds.py builds
// seeds in this layout from Vectors/ciphertext.json.
import FuzzSupport
import ShareCrypto
import ShareRecovery

/// Argon2id runs only at the cheapest parameters, so each execution stays in microseconds; every
/// other value is still parsed and its §5 range checked before anything is allocated.
let cheapArgon2 = Argon2idParameters.minimum

/// The codes §5 allows for a parse failure; anything else is a bug in the parser's error mapping.
let parseCodes: Set<ShareRecoveryError.Code> = [
    .malformedCipherText, .unsupportedVersion, .unsupportedMethod, .kdfMismatch, .invalidKdfParameters,
]
/// The codes decryption may end in: key derivation, authentication, then the plaintext record's own.
let decryptCodes: Set<ShareRecoveryError.Code> = [
    .emptySecret, .invalidKeyMaterial, .authenticationFailed, .malformedRecord, .unsupportedVersion,
    .invalidParameters, .invalidScalar, .invalidPoint, .invalidShare,
]

runFuzzer { input in
    guard input.count >= 33 else { return }
    let asText = input[0] & 1 == 1
    let secretBytes = Array(input[1..<33])
    let envelope = Array(input[33...])

    let cipherText: CipherText
    do throws(ShareRecoveryError) {
        if asText {
            let text = String(decoding: envelope, as: UTF8.self)
            cipherText = try CipherText(base64: text)
            fuzzCheck(cipherText.base64 == text, "accepted base64 does not re-encode to itself")
        } else {
            cipherText = try CipherText(bytes: envelope)
            fuzzCheck(cipherText.bytes == envelope, "accepted envelope does not re-encode to itself")
        }
    } catch {
        fuzzCheck(parseCodes.contains(error.code), "parse failed with unexpected code \(error.code)")
        return
    }
    fuzzCheck((try? CipherText(bytes: cipherText.bytes)) == cipherText, "parse → bytes → parse differs")

    let secret: BackupSecret
    switch cipherText.kdfParameters {
    case .argon2id13(let parameters, let salt):
        // The engine must already have refused anything outside §5's bounds.
        fuzzCheck(
            Argon2idParameters.opslimitRange.contains(parameters.opslimit)
                && Argon2idParameters.memlimitKiBRange.contains(parameters.memlimitKiB),
            "Argon2id parameters outside §5 bounds were accepted")
        fuzzCheck(salt.count == Argon2id.saltCount, "Argon2id salt of the wrong size was accepted")
        guard parameters == cheapArgon2 else { return }
        let password = secretBytes.prefix { $0 != 0 }
        secret = .text(String(decoding: password, as: UTF8.self))
    case .hkdfSHA256(let salt):
        fuzzCheck(salt.count == 32, "HKDF salt of the wrong size was accepted")
        secret = .keyMaterial(SecureBytes(copying: secretBytes))
    }

    let key: SecureBytes
    let record: ShareRecord
    do throws(ShareRecoveryError) {
        key = try cipherText.deriveKey(secret: secret)
        record = try cipherText.decrypt(key: key)
    } catch {
        fuzzCheck(decryptCodes.contains(error.code), "decrypt failed with unexpected code \(error.code)")
        return
    }
    fuzzCheck(record.kind == .backup && record.secret != nil, "decrypted record is not a backup share with a secret")
    // Same key, parameters and nonce must seal the same record to exactly the same envelope.
    do throws(ShareRecoveryError) {
        let again = try CipherText.encrypt(
            record, method: cipherText.method, kdfParameters: cipherText.kdfParameters, key: key,
            keyId: cipherText.keyId, nonce: cipherText.nonce)
        fuzzCheck(again == cipherText, "re-encrypting the decrypted record gives another envelope")
    } catch {
        fuzzFailure("re-encrypting a decrypted record failed: \(error.code)")
    }
}
