#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CLibcrypto
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

/// An incremental SHA-256 or SHA-512 (OpenSSL's libcrypto, which uses the processor's SHA
/// instructions where it has them: threshold ECDSA hashes hundreds of kilobytes per signature). The
/// state lives in its own allocation and is wiped when the hasher goes away, since it has absorbed
/// secret input.
final class SHA2Hasher {
    let function: SHA2Function
    private let state: UnsafeMutableRawPointer
    private let stateCount: Int

    init(_ function: SHA2Function) {
        Sodium.ensureInitialised()
        self.function = function
        switch function {
        case .sha256:
            stateCount = MemoryLayout<SHA256_CTX>.size
            state = .allocate(byteCount: stateCount, alignment: MemoryLayout<SHA256_CTX>.alignment)
            _ = SHA256_Init(state.assumingMemoryBound(to: SHA256_CTX.self))
        case .sha512:
            stateCount = MemoryLayout<SHA512_CTX>.size
            state = .allocate(byteCount: stateCount, alignment: MemoryLayout<SHA512_CTX>.alignment)
            _ = SHA512_Init(state.assumingMemoryBound(to: SHA512_CTX.self))
        }
    }

    /// A hasher in the same state: the shared prefix of several inputs is absorbed once.
    func copy() -> SHA2Hasher {
        let twin = SHA2Hasher(function)
        twin.state.copyMemory(from: state, byteCount: stateCount)
        return twin
    }

    /// Puts this hasher in `other`'s state (same function), without a new allocation.
    func restore(from other: SHA2Hasher) {
        precondition(other.function == function, "hashers of different functions")
        state.copyMemory(from: other.state, byteCount: stateCount)
    }

    deinit {
        sodium_memzero(state, stateCount)
        state.deallocate()
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        switch function {
        case .sha256: _ = SHA256_Update(state.assumingMemoryBound(to: SHA256_CTX.self), base, bytes.count)
        case .sha512: _ = SHA512_Update(state.assumingMemoryBound(to: SHA512_CTX.self), base, bytes.count)
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
        // Final pads the state in place: the hasher is spent afterwards (``restore(from:)`` revives it).
        switch function {
        case .sha256: _ = SHA256_Final(out.u8, state.assumingMemoryBound(to: SHA256_CTX.self))
        case .sha512: _ = SHA512_Final(out.u8, state.assumingMemoryBound(to: SHA512_CTX.self))
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
