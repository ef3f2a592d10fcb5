#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import CSodium

/// The one home of every secret: share scalars, derived keys, password bytes, PRF outputs.
///
/// The bytes live in a private heap buffer that is wiped with `sodium_memzero` when the last copy
/// of the value goes away. `description` never shows the bytes, and `==` runs in constant time.
/// The value is immutable once made, so copies share one buffer safely.
public struct SecureBytes: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    final class Storage: @unchecked Sendable {
        // Immutable after init: the buffer is written once by the initialiser, then only read.
        let buffer: UnsafeMutableRawBufferPointer

        init(count: Int) {
            buffer = .allocate(byteCount: max(count, 1), alignment: 16)
            if count == 0 { buffer.storeBytes(of: 0, as: UInt8.self) }
            self.count = count
        }
        let count: Int

        deinit {
            Sodium.ensureInitialised()
            sodium_memzero(buffer.baseAddress, buffer.count)
            SecureBytes.wipeObserver?(UnsafeRawBufferPointer(buffer))
            buffer.deallocate()
        }
    }

    let storage: Storage

    /// Test-only hook: shown every buffer just after it is wiped and before it is freed, so a test
    /// can check that the buffers it knew held secrets were zeroed. Set it only in tests; the
    /// pointer must not escape the call.
    nonisolated(unsafe) package static var wipeObserver: (@Sendable (UnsafeRawBufferPointer) -> Void)?

    /// Creates `count` bytes filled by `initializer`. If it throws, the partial buffer is wiped.
    /// - Parameters:
    ///   - count: The number of bytes.
    ///   - initializer: Writes the bytes; it gets exactly `count` bytes of writable memory.
    /// - Throws: Whatever `initializer` throws.
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let storage = Storage(count: count)
        try initializer(UnsafeMutableRawBufferPointer(rebasing: storage.buffer[0..<count]))
        self.storage = storage
    }

    /// Copies bytes into a new secret buffer. The caller stays responsible for its own copy.
    /// - Parameter bytes: The bytes to copy.
    public init(copying bytes: some ContiguousBytes) {
        self = bytes.withUnsafeBytes { source in
            SecureBytes(count: source.count) { $0.copyMemory(from: source) }
        }
    }

    /// `count` zero bytes.
    /// - Parameter count: The number of bytes.
    public init(zeros count: Int) {
        self.init(count: count) { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// The number of bytes.
    public var count: Int { storage.count }

    /// Gives read access to the bytes for the duration of `body`; the pointer must not escape.
    /// - Parameter body: Reads the bytes.
    /// - Returns: What `body` returns.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage.buffer[0..<storage.count]))
    }

    /// Constant-time comparison (`sodium_memcmp`); lengths are public.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        Sodium.ensureInitialised()
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }

    /// A copy of the bytes as a plain array, for the few places that must hand a secret to the user
    /// (an export the user asked for). The caller owns the copy's lifetime.
    public func revealedBytes() -> [UInt8] { withUnsafeBytes { Array($0) } }

    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}

extension SecureBytes {
    /// Concatenation into a new secret buffer.
    /// - Parameter parts: The pieces, in order.
    /// - Returns: One buffer holding all pieces.
    public static func concatenating(_ parts: [SecureBytes]) -> SecureBytes {
        let total = parts.reduce(0) { $0 + $1.count }
        return SecureBytes(count: total) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + bytes.count]).copyMemory(from: bytes)
                }
                offset += part.count
            }
        }
    }

    /// A sub-range copied into its own secret buffer.
    /// - Parameter range: The byte range, which must lie within the buffer.
    /// - Returns: The bytes in `range`.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` when the range is out of bounds.
    public func slice(_ range: Range<Int>) throws -> SecureBytes {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw ShareCryptoError(.invalidLength, "slice \(range) outside \(count) bytes")
        }
        return withUnsafeBytes { source in
            SecureBytes(count: range.count) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[range])) }
        }
    }
}

/// Constant-time equality of public-length byte strings (e.g. webhook secrets, tags).
/// - Returns: Whether the two inputs are equal; unequal lengths return `false` at once.
public func constantTimeEquals(_ lhs: some ContiguousBytes, _ rhs: some ContiguousBytes) -> Bool {
    lhs.withUnsafeBytes { a in
        rhs.withUnsafeBytes { b in
            guard a.count == b.count else { return false }
            if a.isEmpty { return true }
            Sodium.ensureInitialised()
            return sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
        }
    }
}
