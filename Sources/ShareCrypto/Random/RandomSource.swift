#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// Where randomness comes from. Production code draws from ``SystemRandom``, directly or through a
/// ``DeterministicRandom`` keyed by a fresh seed from it (the threshold ECDSA roles); tests and
/// vector generation inject ``DeterministicRandom`` with published seeds so that every output can be
/// recomputed.
public protocol RandomSource: Sendable {
    /// Fills `buffer` with random bytes.
    /// - Parameter buffer: The memory to fill.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// `count` random bytes as a secret.
    /// - Parameter count: The number of bytes.
    public func secureBytes(count: Int) -> SecureBytes {
        SecureBytes(count: count) { fill($0) }
    }

    /// `count` random public bytes (salts, nonces, set identifiers).
    /// - Parameter count: The number of bytes.
    public func bytes(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}

/// The operating system's CSPRNG through libsodium's `randombytes_buf`.
public struct SystemRandom: RandomSource {
    /// Creates the system source.
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        Sodium.ensureInitialised()
        randombytes_buf(base, buffer.count)
    }
}

/// A reproducible byte stream: ChaCha20 keyed by the BLAKE2b-256 of a seed, each ``fill(_:)`` call
/// with the next 8-byte little-endian counter as nonce (docs/ecdsa.md "Random values").
///
/// Its bytes are exactly as secret as its seed. The threshold ECDSA roles expand a fresh 32-byte
/// seed from ``SystemRandom`` into every value of a pair setup or signing session, so a session is
/// reproducible from its seed and the published `ecdsa@1` vectors can fix one; tests and vector
/// generation use public seeds. Never key it with anything guessable when its output is secret.
public final class DeterministicRandom: RandomSource {
    private let key: SecureBytes
    private let counter = Locked<UInt64>(0)

    /// Creates a stream from a seed.
    /// - Parameter seed: Any bytes; hashed to a 32-byte ChaCha20 key.
    public init(seed: some ContiguousBytes) {
        Sodium.ensureInitialised()
        key = SecureBytes(count: 32) { out in
            seed.withUnsafeBytes { s in
                _ = crypto_generichash(
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                    s.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(s.count), nil, 0)
            }
        }
    }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        // A fresh 8-byte nonce per call keeps calls independent of each other's lengths.
        var nonce = counter.withLock { value in
            defer { value += 1 }
            return value.littleEndian
        }
        key.withUnsafeBytes { k in
            withUnsafeBytes(of: &nonce) { n in
                _ = crypto_stream_chacha20(
                    base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count),
                    n.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
    }
}
