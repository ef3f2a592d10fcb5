/// GF(2^128) with x^128 + x^7 + x^2 + x + 1, for the OT-extension consistency check: elements are
/// 16 bytes, little-endian bit order (bit i of byte i/8 is the coefficient of x^(8·(i/8) + i%8)).
enum GF128 {
    struct Element: Equatable {
        var low: UInt64
        var high: UInt64

        static let zero = Element(low: 0, high: 0)

        init(low: UInt64, high: UInt64) {
            self.low = low
            self.high = high
        }

        init(_ bytes: ArraySlice<UInt8>) {
            self = bytes.withUnsafeBytes { Element($0, at: 0) }
        }

        /// The element in the 16 bytes of `bytes` from `offset`.
        init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            for index in 0..<8 {
                low |= UInt64(bytes[offset + index]) << (8 * index)
                high |= UInt64(bytes[offset + 8 + index]) << (8 * index)
            }
            self.init(low: low, high: high)
        }

        var bytes: [UInt8] {
            (0..<8).map { UInt8(truncatingIfNeeded: low >> (8 * $0)) }
                + (0..<8).map { UInt8(truncatingIfNeeded: high >> (8 * $0)) }
        }

        static func ^ (lhs: Element, rhs: Element) -> Element {
            Element(low: lhs.low ^ rhs.low, high: lhs.high ^ rhs.high)
        }

        /// Shift-and-add with masks: no branch on either operand (one of them may hold secret bits).
        static func * (lhs: Element, rhs: Element) -> Element {
            var product = Element.zero
            var shifted = lhs
            for bit in 0..<128 {
                let word = bit < 64 ? rhs.low : rhs.high
                let mask = 0 &- ((word >> UInt64(bit % 64)) & 1)
                product.low ^= shifted.low & mask
                product.high ^= shifted.high & mask
                let carry = 0 &- (shifted.high >> 63)
                shifted.high = (shifted.high << 1) | (shifted.low >> 63)
                shifted.low = (shifted.low << 1) ^ (0x87 & carry)
            }
            return product
        }
    }

    /// `x·a`: a shift, and the reduction by a mask rather than a branch.
    @inline(__always)
    static func timesX(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
        ((low << 1) ^ (0x87 & (0 &- (high >> 63))), (high << 1) | (low >> 63))
    }

    /// `Σ_j χ_j·row_j` on each 128-bit half of `count` 32-byte rows, the χ_j public and the rows
    /// secret. χ_j·a is `Σ_i x^(4i)·n_i(x)·a` over the nibbles n_i of χ_j, so each row's 16 multiples
    /// `n(x)·a` (a table built from the secret, read at public positions) go into 32 accumulators,
    /// which one Horner pass by x^4 combines at the end: no branch or secret-indexed read, and a
    /// fraction of the work of a bitwise multiplication per row.
    /// - Parameters:
    ///   - rows: `count` × 32 bytes, each half an element.
    ///   - chi: `count` elements, two words each (low, high).
    static func weightedSums(rows: UnsafeRawBufferPointer, chi: UnsafeBufferPointer<UInt64>, count: Int) -> (
        Element, Element
    ) {
        precondition(rows.count >= count * 32 && chi.count >= count * 2, "rows and challenges of the same count")
        return withUnsafeTemporaryAllocation(of: SIMD4<UInt64>.self, capacity: 48) { buffer in
            let table = buffer.baseAddress!
            let sums = table + 16
            for i in 0..<48 { buffer[i] = .zero }
            defer { for i in 0..<48 { buffer[i] = .zero } }
            for j in 0..<count {
                let row = rows.baseAddress! + j * 32
                func word(_ offset: Int) -> UInt64 {
                    UInt64(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                }
                var a = (word(0), word(8))
                var b = (word(16), word(24))
                // table[2^k] = x^k·row, the others by sums of those.
                for bit in 0..<4 {
                    table[1 << bit] = SIMD4(a.0, a.1, b.0, b.1)
                    a = timesX(a.0, a.1)
                    b = timesX(b.0, b.1)
                }
                table[3] = table[2] ^ table[1]
                table[5] = table[4] ^ table[1]
                table[6] = table[4] ^ table[2]
                table[7] = table[4] ^ table[3]
                for n in 9..<16 { table[n] = table[8] ^ table[n - 8] }
                let low = chi[2 * j]
                let high = chi[2 * j + 1]
                for i in 0..<16 {
                    sums[i] ^= table[Int(truncatingIfNeeded: (low >> UInt64(4 * i)) & 15)]
                    sums[16 + i] ^= table[Int(truncatingIfNeeded: (high >> UInt64(4 * i)) & 15)]
                }
            }
            var acc = sums[31]
            for i in stride(from: 30, through: 0, by: -1) {
                // acc·x^4 on both halves, then the next accumulator.
                let over = SIMD4(acc[1] >> 60, 0, acc[3] >> 60, 0)
                let shifted = SIMD4(
                    acc[0] << 4, (acc[1] << 4) | (acc[0] >> 60), acc[2] << 4, (acc[3] << 4) | (acc[2] >> 60))
                // The 4 bits shifted out of each half come back as x^128 = x^7 + x^2 + x + 1.
                var next = shifted ^ sums[i]
                next ^= over
                next ^= over &<< 1
                next ^= over &<< 2
                next ^= over &<< 7
                acc = next
            }
            return (Element(low: acc[0], high: acc[1]), Element(low: acc[2], high: acc[3]))
        }
    }
}
