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
}
