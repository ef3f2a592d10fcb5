import ShareCrypto
import W3CTraceContext

/// Trace and span ids for ``TraceContextTracer``: xoshiro256** seeded once per process from the system's
/// source. An id must be unique and not guessable in practice; it guards nothing, so it need not come
/// from a cryptographic generator. The library's `random()` asked the kernel for every 8 bytes, a
/// system call per span in the profile (docs/server.md, "Throughput").
enum TraceIdentifiers {
    private static let generator = Locked(Xoshiro256StarStar(seed: SystemRandom().bytes(count: 32)))

    static func traceID() -> TraceID { generator.withLock { TraceID.random(using: &$0) } }

    static func spanID() -> SpanID { generator.withLock { SpanID.random(using: &$0) } }
}

/// xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, period 2^256 − 1.
struct Xoshiro256StarStar: RandomNumberGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// - Parameter seed: 32 bytes, not all zero (a zero state would stay zero).
    init(seed: [UInt8]) {
        precondition(seed.count == 32, "xoshiro256** takes a 32-byte seed")
        func word(_ index: Int) -> UInt64 {
            seed[index * 8..<index * 8 + 8].reduce(0) { $0 << 8 | UInt64($1) }
        }
        state = (word(0), word(1), word(2), word(3) | 1)
    }

    mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        value << count | value >> (64 - count)
    }
}
