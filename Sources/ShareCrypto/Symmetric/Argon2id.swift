#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// Argon2id v1.3 parameters as docs/formats.md §5 bounds them: opslimit 1...16, memlimit 8...1048576 KiB.
public struct Argon2idParameters: Sendable, Hashable, CustomStringConvertible {
    /// Accepted opslimit range.
    public static let opslimitRange: ClosedRange<UInt32> = 1...16
    /// Accepted memlimit range in KiB.
    public static let memlimitKiBRange: ClosedRange<UInt32> = 8...1_048_576
    /// Defaults for new backups: opslimit 3, 64 MiB.
    public static let `default` = Argon2idParameters(unchecked: 3, 65_536)
    /// The cheapest accepted parameters (tests, benchmarks).
    public static let minimum = Argon2idParameters(unchecked: 1, 8)

    /// Passes over memory.
    public let opslimit: UInt32
    /// Memory in KiB.
    public let memlimitKiB: UInt32

    /// Creates parameters, checking the bounds before any work.
    /// - Throws: ``ShareCryptoError/Code/invalidKdfParameters`` outside the bounds.
    public init(opslimit: UInt32, memlimitKiB: UInt32) throws {
        guard Self.opslimitRange.contains(opslimit) else {
            throw ShareCryptoError(.invalidKdfParameters, "opslimit \(opslimit) outside \(Self.opslimitRange)")
        }
        guard Self.memlimitKiBRange.contains(memlimitKiB) else {
            throw ShareCryptoError(
                .invalidKdfParameters, "memlimit \(memlimitKiB) KiB outside \(Self.memlimitKiBRange)")
        }
        self.init(unchecked: opslimit, memlimitKiB)
    }

    private init(unchecked opslimit: UInt32, _ memlimitKiB: UInt32) {
        self.opslimit = opslimit
        self.memlimitKiB = memlimitKiB
    }

    public var description: String { "argon2id13(ops: \(opslimit), mem: \(memlimitKiB) KiB)" }
}

/// Argon2id13 through libsodium's `crypto_pwhash`.
public enum Argon2id {
    /// Salt size in bytes.
    public static let saltCount = 16

    /// Derives a key under bounded parameters (the cipherText path).
    /// - Parameters:
    ///   - password: The password bytes (already normalised by the caller).
    ///   - salt: 16 bytes.
    ///   - parameters: Bounded parameters.
    ///   - outputCount: The key size (32 for cipherText keys).
    /// - Returns: The derived key.
    /// - Throws: ``ShareCryptoError/Code/emptySecret`` for an empty password,
    ///   ``ShareCryptoError/Code/invalidLength`` for a wrong salt size,
    ///   ``ShareCryptoError/Code/backendFailure`` if memory cannot be had.
    public static func deriveKey(
        password: SecureBytes, salt: some ContiguousBytes, parameters: Argon2idParameters, outputCount: Int = 32
    ) throws -> SecureBytes {
        guard password.count > 0 else { throw ShareCryptoError(.emptySecret, "the password is empty") }
        return try hash(
            password: password, salt: salt, opslimit: UInt64(parameters.opslimit),
            memlimitBytes: Int(parameters.memlimitKiB) * 1024, outputCount: outputCount)
    }

    /// Raw `crypto_pwhash` Argon2id13 with libsodium's own limits (known-answer tests use byte memlimits).
    /// - Throws: ``ShareCryptoError/Code/invalidKdfParameters`` outside libsodium's limits,
    ///   ``ShareCryptoError/Code/invalidLength`` for a wrong salt size,
    ///   ``ShareCryptoError/Code/backendFailure`` when the hash fails (e.g. out of memory).
    public static func hash(
        password: SecureBytes, salt: some ContiguousBytes, opslimit: UInt64, memlimitBytes: Int, outputCount: Int
    ) throws -> SecureBytes {
        Sodium.ensureInitialised()
        let saltSize = salt.withUnsafeBytes { $0.count }
        guard saltSize == Int(crypto_pwhash_argon2id_SALTBYTES) else {
            throw ShareCryptoError(.invalidLength, "Argon2id salt must be \(saltCount) bytes, got \(saltSize)")
        }
        guard opslimit >= UInt64(crypto_pwhash_argon2id_OPSLIMIT_MIN),
            opslimit <= UInt64(UInt32.max),
            memlimitBytes >= Int(crypto_pwhash_argon2id_MEMLIMIT_MIN),
            memlimitBytes <= 4 << 30,
            outputCount >= Int(crypto_pwhash_argon2id_BYTES_MIN), outputCount <= 1 << 16
        else {
            throw ShareCryptoError(.invalidKdfParameters, "Argon2id parameters outside libsodium's limits")
        }
        var status: Int32 = -1
        let key = SecureBytes(count: outputCount) { out in
            password.withUnsafeBytes { p in
                salt.withUnsafeBytes { s in
                    status = crypto_pwhash(
                        out.u8, UInt64(outputCount),
                        p.i8, UInt64(p.count),
                        s.u8,
                        opslimit, memlimitBytes, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard status == 0 else { throw ShareCryptoError(.backendFailure, "crypto_pwhash failed (out of memory?)") }
        return key
    }
}
