import CSodium

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
        // 48 entries of four words (a row's two halves): the table's 16, then the 32 accumulators.
        // A heap array rather than a stack allocation of SIMD4 entries: the optimiser wrote below such
        // a buffer in release builds (a smashed return address), and plain words cost no more here.
        var scratch = [UInt64](repeating: 0, count: 48 * 4)
        defer { scratch.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        return scratch.withUnsafeMutableBufferPointer { words in
            let table = words.baseAddress!
            let sums = table + 16 * 4
            for j in 0..<count {
                let row = rows.baseAddress! + j * 32
                func word(_ offset: Int) -> UInt64 {
                    UInt64(littleEndian: row.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                }
                var a = (word(0), word(8))
                var b = (word(16), word(24))
                // table[2^k] = x^k·row, the others by sums of those.
                for bit in 0..<4 {
                    let entry = table + 4 * (1 << bit)
                    (entry[0], entry[1], entry[2], entry[3]) = (a.0, a.1, b.0, b.1)
                    a = timesX(a.0, a.1)
                    b = timesX(b.0, b.1)
                }
                func combine(_ n: Int, _ m: Int, _ k: Int) {
                    for w in 0..<4 { table[4 * n + w] = table[4 * m + w] ^ table[4 * k + w] }
                }
                combine(3, 2, 1)
                combine(5, 4, 1)
                combine(6, 4, 2)
                combine(7, 4, 3)
                for n in 9..<16 { combine(n, 8, n - 8) }
                let low = chi[2 * j]
                let high = chi[2 * j + 1]
                for i in 0..<16 {
                    let lowEntry = table + 4 * Int(truncatingIfNeeded: (low >> UInt64(4 * i)) & 15)
                    let highEntry = table + 4 * Int(truncatingIfNeeded: (high >> UInt64(4 * i)) & 15)
                    for w in 0..<4 {
                        sums[4 * i + w] ^= lowEntry[w]
                        sums[4 * (16 + i) + w] ^= highEntry[w]
                    }
                }
            }
            // Horner by x^4 from the last accumulator down, on both halves.
            var acc = (sums[4 * 31], sums[4 * 31 + 1], sums[4 * 31 + 2], sums[4 * 31 + 3])
            for i in stride(from: 30, through: 0, by: -1) {
                let (low0, high0) = timesX4(acc.0, acc.1)
                let (low1, high1) = timesX4(acc.2, acc.3)
                acc = (low0 ^ sums[4 * i], high0 ^ sums[4 * i + 1], low1 ^ sums[4 * i + 2], high1 ^ sums[4 * i + 3])
            }
            return (Element(low: acc.0, high: acc.1), Element(low: acc.2, high: acc.3))
        }
    }

    /// `x^4·a`: the 4 bits shifted out come back as x^128 = x^7 + x^2 + x + 1, by shifts of public
    /// positions only.
    @inline(__always)
    static func timesX4(_ low: UInt64, _ high: UInt64) -> (UInt64, UInt64) {
        let over = high >> 60
        return ((low << 4) ^ over ^ (over << 1) ^ (over << 2) ^ (over << 7), (high << 4) | (low >> 60))
    }
}
