#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Keccak-256 as Ethereum uses it: the original Keccak padding (`0x01 … 0x80`), not SHA3-256's
/// `0x06`. Written here because OpenSSL 3.0 offers SHA3 only. Public inputs only: it feeds
/// addresses and transaction digests, never a secret.
public enum Keccak256 {
    /// Digest size in bytes.
    public static let outputCount = 32
    // Rate of Keccak[c = 512]: 1600 − 512 bits.
    private static let rateCount = 136

    /// The 32-byte Keccak-256 digest of public bytes.
    /// - Parameter data: The bytes.
    /// - Returns: The digest.
    public static func hash(_ data: some ContiguousBytes) -> [UInt8] { sponge(data, domainSuffix: 0x01) }

    /// FIPS 202 SHA3-256: the same sponge with the `0x06` suffix. Only the tests use it, to check the
    /// permutation over several blocks against NIST's SHA3-256 examples, which Keccak-256 itself lacks.
    package static func sha3_256(_ data: some ContiguousBytes) -> [UInt8] { sponge(data, domainSuffix: 0x06) }

    private static func sponge(_ data: some ContiguousBytes, domainSuffix: UInt8) -> [UInt8] {
        var state = [UInt64](repeating: 0, count: 25)
        data.withUnsafeBytes { input in
            var offset = 0
            while input.count - offset >= rateCount {
                absorb(UnsafeRawBufferPointer(rebasing: input[offset..<offset + rateCount]), into: &state)
                offset += rateCount
            }
            var last = [UInt8](repeating: 0, count: rateCount)
            let tail = input.count - offset
            for index in 0..<tail { last[index] = input[offset + index] }
            last[tail] ^= domainSuffix
            last[rateCount - 1] ^= 0x80
            last.withUnsafeBytes { absorb($0, into: &state) }
        }
        var digest = [UInt8](repeating: 0, count: outputCount)
        for index in 0..<outputCount {
            digest[index] = UInt8(truncatingIfNeeded: state[index / 8] >> (8 * (index % 8)))
        }
        return digest
    }

    private static func absorb(_ block: UnsafeRawBufferPointer, into state: inout [UInt64]) {
        for lane in 0..<(rateCount / 8) {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(block[lane * 8 + byte]) << (8 * byte) }
            state[lane] ^= word
        }
        permute(&state)
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]
    // ρ offsets indexed by lane x + 5y.
    private static let rotations: [UInt64] = [
        0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
    ]

    /// Keccak-f[1600], the 24 rounds of θ, ρ, π, χ, ι.
    static func permute(_ state: inout [UInt64]) {
        var parity = [UInt64](repeating: 0, count: 5)
        var moved = [UInt64](repeating: 0, count: 25)
        for round in 0..<24 {
            for x in 0..<5 { parity[x] = state[x] ^ state[x + 5] ^ state[x + 10] ^ state[x + 15] ^ state[x + 20] }
            for x in 0..<5 {
                let mix = parity[(x + 4) % 5] ^ rotate(parity[(x + 1) % 5], 1)
                for y in stride(from: 0, to: 25, by: 5) { state[x + y] ^= mix }
            }
            // ρ and π: lane (x, y) moves to (y, 2x + 3y).
            for x in 0..<5 {
                for y in 0..<5 {
                    moved[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(state[x + 5 * y], rotations[x + 5 * y])
                }
            }
            for y in stride(from: 0, to: 25, by: 5) {
                for x in 0..<5 { state[x + y] = moved[x + y] ^ (~moved[(x + 1) % 5 + y] & moved[(x + 2) % 5 + y]) }
            }
            state[0] ^= roundConstants[round]
        }
    }

    private static func rotate(_ word: UInt64, _ count: UInt64) -> UInt64 {
        count == 0 ? word : (word << count) | (word >> (64 - count))
    }
}
