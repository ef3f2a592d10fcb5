extension ScalarField {
    /// A sum of products `Σ a_i·b_i` kept unreduced in nine words and reduced once at the end: each
    /// term is a plain 4 × 4-word product (16 word multiplications) and a nine-word addition, where
    /// a Montgomery multiplication and a modular addition per term cost about twice as much. The
    /// multiplication's inner sums over the OT rows (`RandomVectorOLE`) are such sums of hundreds
    /// of terms.
    ///
    /// Up to 2^64 − 1 terms of factors below 2^256 fit: the top word only counts carries. No
    /// branch or memory access depends on the values.
    struct ProductSum {
        private var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0
        private var w4: UInt64 = 0, w5: UInt64 = 0, w6: UInt64 = 0, w7: UInt64 = 0, w8: UInt64 = 0

        /// Adds `a·b`, both plain and below 2^256.
        @inline(__always)
        mutating func add(_ a: Limbs, times b: Limbs) {
            // Schoolbook product, one row per word of a.
            var carry: UInt64 = 0
            let p0 = multiplyAdd(0, a.l0, b.l0, &carry)
            var p1 = multiplyAdd(0, a.l0, b.l1, &carry)
            var p2 = multiplyAdd(0, a.l0, b.l2, &carry)
            var p3 = multiplyAdd(0, a.l0, b.l3, &carry)
            var p4 = carry
            carry = 0
            p1 = multiplyAdd(p1, a.l1, b.l0, &carry)
            p2 = multiplyAdd(p2, a.l1, b.l1, &carry)
            p3 = multiplyAdd(p3, a.l1, b.l2, &carry)
            p4 = multiplyAdd(p4, a.l1, b.l3, &carry)
            var p5 = carry
            carry = 0
            p2 = multiplyAdd(p2, a.l2, b.l0, &carry)
            p3 = multiplyAdd(p3, a.l2, b.l1, &carry)
            p4 = multiplyAdd(p4, a.l2, b.l2, &carry)
            p5 = multiplyAdd(p5, a.l2, b.l3, &carry)
            var p6 = carry
            carry = 0
            p3 = multiplyAdd(p3, a.l3, b.l0, &carry)
            p4 = multiplyAdd(p4, a.l3, b.l1, &carry)
            p5 = multiplyAdd(p5, a.l3, b.l2, &carry)
            p6 = multiplyAdd(p6, a.l3, b.l3, &carry)
            let p7 = carry
            carry = 0
            w0 = addCarry(w0, p0, &carry)
            w1 = addCarry(w1, p1, &carry)
            w2 = addCarry(w2, p2, &carry)
            w3 = addCarry(w3, p3, &carry)
            w4 = addCarry(w4, p4, &carry)
            w5 = addCarry(w5, p5, &carry)
            w6 = addCarry(w6, p6, &carry)
            w7 = addCarry(w7, p7, &carry)
            w8 &+= carry
        }

        /// The sum modulo the field's modulus, plain, and the sum back to zero.
        mutating func reduced(in field: ScalarField) -> Limbs {
            // w0..w3 + w4..w7·R + w8·R², R = 2^256: reduceWide's Montgomery form of the first two
            // parts, left, and mont(w8, R³) = w8·R² mod m, already plain.
            let wide = field.reduceWide(
                low: Limbs(l0: w0, l1: w1, l2: w2, l3: w3), high: Limbs(l0: w4, l1: w5, l2: w6, l3: w7))
            let top = field.multiply(Limbs(l0: w8, l1: 0, l2: 0, l3: 0), field.r3)
            self = ProductSum()
            return field.add(field.fromMontgomery(wide), top)
        }
    }
}
