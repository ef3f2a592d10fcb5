#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// One piece of a hash input: public bytes, or a secret read straight from its wiped buffer, so a
/// hash over a secret (a nonce seed, a share) never copies it into an ordinary array.
enum HashInput {
    case bytes([UInt8])
    case secret(SecureBytes)
}

/// The two SHA-2 functions the FROST ciphersuites use.
enum SHA2Function {
    case sha256, sha512

    var outputCount: Int {
        switch self {
        case .sha256: 32
        case .sha512: 64
        }
    }
}

/// An incremental SHA-256 or SHA-512 (libsodium `crypto_hash_sha*`). The state lives in its own
/// allocation and is wiped when the hasher goes away, since it has absorbed secret input.
final class SHA2Hasher {
    let function: SHA2Function
    private let state: UnsafeMutableRawPointer
    private let stateCount: Int

    init(_ function: SHA2Function) {
        Sodium.ensureInitialised()
        self.function = function
        switch function {
        case .sha256:
            stateCount = MemoryLayout<crypto_hash_sha256_state>.size
            state = .allocate(byteCount: stateCount, alignment: MemoryLayout<crypto_hash_sha256_state>.alignment)
            _ = crypto_hash_sha256_init(state.assumingMemoryBound(to: crypto_hash_sha256_state.self))
        case .sha512:
            stateCount = MemoryLayout<crypto_hash_sha512_state>.size
            state = .allocate(byteCount: stateCount, alignment: MemoryLayout<crypto_hash_sha512_state>.alignment)
            _ = crypto_hash_sha512_init(state.assumingMemoryBound(to: crypto_hash_sha512_state.self))
        }
    }

    /// A hasher in the same state: the shared prefix of several inputs is absorbed once.
    func copy() -> SHA2Hasher {
        let twin = SHA2Hasher(function)
        twin.state.copyMemory(from: state, byteCount: stateCount)
        return twin
    }

    deinit {
        sodium_memzero(state, stateCount)
        state.deallocate()
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        switch function {
        case .sha256:
            _ = crypto_hash_sha256_update(
                state.assumingMemoryBound(to: crypto_hash_sha256_state.self), bytes.u8, UInt64(bytes.count))
        case .sha512:
            _ = crypto_hash_sha512_update(
                state.assumingMemoryBound(to: crypto_hash_sha512_state.self), bytes.u8, UInt64(bytes.count))
        }
    }

    func update(_ input: HashInput) {
        switch input {
        case .bytes(let bytes): bytes.withUnsafeBytes { update($0) }
        case .secret(let secret): secret.withUnsafeBytes { update($0) }
        }
    }

    func update(_ inputs: [HashInput]) {
        for input in inputs { update(input) }
    }

    /// Writes the digest into `out`, which holds exactly ``SHA2Function/outputCount`` bytes.
    func finalize(into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == function.outputCount, "digest buffer of the wrong size")
        switch function {
        case .sha256: _ = crypto_hash_sha256_final(state.assumingMemoryBound(to: crypto_hash_sha256_state.self), out.u8)
        case .sha512: _ = crypto_hash_sha512_final(state.assumingMemoryBound(to: crypto_hash_sha512_state.self), out.u8)
        }
    }

    /// The digest of public input.
    func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: function.outputCount) { buffer, initialized in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = function.outputCount
        }
    }

    /// The digest of input that held a secret, kept secret.
    func finalizeSecret() -> SecureBytes {
        SecureBytes(count: function.outputCount) { finalize(into: $0) }
    }

    /// One-shot digest of public bytes.
    static func hash(_ function: SHA2Function, _ data: some ContiguousBytes) -> [UInt8] {
        let hasher = SHA2Hasher(function)
        data.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }

    /// One-shot digest over pieces.
    static func hash(_ function: SHA2Function, _ inputs: [HashInput]) -> [UInt8] {
        let hasher = SHA2Hasher(function)
        hasher.update(inputs)
        return hasher.finalize()
    }

    /// One-shot digest over pieces, one of which is secret.
    static func hashSecret(_ function: SHA2Function, _ inputs: [HashInput]) -> SecureBytes {
        let hasher = SHA2Hasher(function)
        hasher.update(inputs)
        return hasher.finalizeSecret()
    }
}

/// SHA-256 (FIPS 180-4) of public data.
public enum SHA256 {
    /// Digest size in bytes.
    public static let outputCount = 32

    /// The 32-byte SHA-256 digest of public bytes.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] { SHA2Hasher.hash(.sha256, data) }
}

/// SHA-512 (FIPS 180-4) of public data.
public enum SHA512 {
    /// Digest size in bytes.
    public static let outputCount = 64

    /// The 64-byte SHA-512 digest of public bytes.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] { SHA2Hasher.hash(.sha512, data) }
}
