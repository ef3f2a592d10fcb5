import ShareCrypto

/// The four-round Feistel network that turns the master secret into the encrypted master secret and
/// back (SLIP-0039 §Encryption of the master secret, §Decryption of the master secret).
enum MasterSecretEncryption {
    /// PBKDF2 iterations per round at exponent 0; round `e` uses `baseIterations << e`.
    static let baseIterations = 2500
    private static let roundCount: UInt8 = 4
    private static let saltPrefix: [UInt8] = Array("shamir".utf8)

    /// EMS = Encrypt(MS, P, e, id, ext).
    /// - Throws: ``RecoveryKitError/Code/backendFailure`` if PBKDF2 fails.
    static func encrypt(
        _ masterSecret: SecureBytes, passphrase: SecureBytes, iterationExponent: Int, identifier: Int, extendable: Bool
    ) throws -> SecureBytes {
        try feistel(
            masterSecret, rounds: Array(0..<roundCount), passphrase: passphrase,
            iterationExponent: iterationExponent, salt: salt(identifier: identifier, extendable: extendable))
    }

    /// MS = Decrypt(EMS, P, e, id, ext): the same network with the rounds in reverse order.
    /// - Throws: ``RecoveryKitError/Code/backendFailure`` if PBKDF2 fails.
    static func decrypt(
        _ encryptedMasterSecret: SecureBytes, passphrase: SecureBytes, iterationExponent: Int, identifier: Int,
        extendable: Bool
    ) throws -> SecureBytes {
        try feistel(
            encryptedMasterSecret, rounds: (0..<roundCount).reversed(), passphrase: passphrase,
            iterationExponent: iterationExponent, salt: salt(identifier: identifier, extendable: extendable))
    }

    /// `"shamir" || id` (big-endian) when the backup is not extendable, empty when it is.
    private static func salt(identifier: Int, extendable: Bool) -> [UInt8] {
        extendable ? [] : saltPrefix + [UInt8(identifier >> 8), UInt8(identifier & 0xFF)]
    }

    private static func feistel(
        _ input: SecureBytes, rounds: [UInt8], passphrase: SecureBytes, iterationExponent: Int, salt: [UInt8]
    ) throws -> SecureBytes {
        precondition(input.count % 2 == 0, "the Feistel network needs an even length")
        let half = input.count / 2
        var left = try input.slice(0..<half)
        var right = try input.slice(half..<input.count)
        for round in rounds {
            let roundKey = try roundFunction(
                round: round, passphrase: passphrase, iterationExponent: iterationExponent, salt: salt, right: right)
            let mixed = xor(left, roundKey)
            left = right
            right = mixed
        }
        return SecureBytes.concatenating([right, left])
    }

    /// F(i, R) = PBKDF2-HMAC-SHA256(password: i || P, salt: salt || R, iterations: 2500 << e, n/2 bytes).
    private static func roundFunction(
        round: UInt8, passphrase: SecureBytes, iterationExponent: Int, salt: [UInt8], right: SecureBytes
    ) throws -> SecureBytes {
        let password = SecureBytes.concatenating([SecureBytes(copying: [round]), passphrase])
        let roundSalt = SecureBytes.concatenating([SecureBytes(copying: salt), right])
        do {
            return try roundSalt.withUnsafeBytes { saltBytes in
                try PBKDF2.hmacSHA256(
                    password: password, salt: saltBytes, iterations: baseIterations << iterationExponent,
                    outputCount: right.count)
            }
        } catch let error as ShareCryptoError {
            throw RecoveryKitError(.backendFailure, "PBKDF2 round \(round) failed: \(error.code)")
        }
    }

    private static func xor(_ a: SecureBytes, _ b: SecureBytes) -> SecureBytes {
        SecureBytes(count: a.count) { out in
            a.withUnsafeBytes { x in
                b.withUnsafeBytes { y in
                    for i in 0..<out.count { out[i] = x[i] ^ y[i] }
                }
            }
        }
    }
}
