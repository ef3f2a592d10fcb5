/// Constant-time arithmetic modulo a 256-bit group order, in Montgomery form (R = 2^256).
///
/// One implementation serves both curves, so scalar code paths are the same whichever curve a
/// record names. No branch or memory access depends on secret values; the only branches are on
/// public data (the exponent in `inverse`, which is the public `order − 2`).
struct ScalarField: Sendable {
    /// Four 64-bit limbs, least significant first.
    struct Limbs: Sendable, Equatable {
        var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64
        static let zero = Limbs(l0: 0, l1: 0, l2: 0, l3: 0)
        static let one = Limbs(l0: 1, l1: 0, l2: 0, l3: 0)
    }

    let modulus: Limbs
    /// −modulus⁻¹ mod 2^64.
    private let mPrime: UInt64
    /// R² mod modulus, to enter Montgomery form.
    let r2: Limbs
    /// R³ mod modulus, to fold the high half of a 512-bit input.
    let r3: Limbs
    /// 2^256 − modulus, which is 2^256 mod modulus: the fold of ``reduceWidePlain(low:high:)``.
    private let complement: Limbs

    init(modulus: Limbs) {
        self.modulus = modulus
        // Newton iteration doubles the correct low bits each step: 6 steps give 64 bits.
        var inv: UInt64 = 1
        for _ in 0..<6 { inv = inv &* (2 &- modulus.l0 &* inv) }
        mPrime = 0 &- inv
        // R mod m by 256 modular doublings of 1, then R² by 256 more.
        var value = Limbs.one
        let field = PartialField(modulus: modulus)
        for _ in 0..<512 { value = field.add(value, value) }
        r2 = value
        var r3Value = Limbs.zero
        // R³ = mont(R², R²) needs mPrime, which is now set; compute through a temporary field.
        r3Value = ScalarField.montgomeryMultiply(value, value, modulus: modulus, mPrime: 0 &- inv)
        r3 = r3Value
        complement = ScalarField.subtract(.zero, modulus).difference
    }

    // MARK: Conversions

    /// Montgomery form of a value below 2^256 (reduces values ≥ modulus too).
    func toMontgomery(_ a: Limbs) -> Limbs { multiply(a, r2) }

    /// Leaves Montgomery form: mont(a, 1).
    func fromMontgomery(_ a: Limbs) -> Limbs { multiply(a, .one) }

    /// Reduces a 512-bit value hi·2^256 + lo to Montgomery form of (value mod modulus).
    func reduceWide(low: Limbs, high: Limbs) -> Limbs {
        add(multiply(low, r2), multiply(high, r3))
    }

    /// Reduces hi·2^256 + lo, hi below 2^128, to a plain value below the modulus, for a modulus
    /// within 2^129 of 2^256 (secp256k1's n). With c = 2^256 − modulus, hi·2^256 ≡ hi·c: a 2 × 3-word
    /// product and a small second fold, about a fifth of the Montgomery multiplication it replaces.
    func reduceWidePlain(low: Limbs, high: Limbs) -> Limbs {
        precondition(complement.l3 == 0 && complement.l2 <= 1, "the fold needs 2^256 − modulus below 2^129")
        let c = complement
        // q = hi·(c0 + c1·2^64): four words.
        var carry: UInt64 = 0
        let q0 = Self.multiplyAdd(0, high.l0, c.l0, &carry)
        var q1 = Self.multiplyAdd(0, high.l1, c.l0, &carry)
        var q2 = carry
        carry = 0
        q1 = Self.multiplyAdd(q1, high.l0, c.l1, &carry)
        q2 = Self.multiplyAdd(q2, high.l1, c.l1, &carry)
        var q3 = carry
        // + hi·c2·2^128, c2 being 0 or 1 (a public constant, so a mask of it is no secret).
        let c2 = 0 &- c.l2
        carry = 0
        q2 = Self.addCarry(q2, high.l0 & c2, &carry)
        q3 = Self.addCarry(q3, high.l1 & c2, &carry)
        let q4 = carry
        // s = lo + q, below 3·2^256: the words above 2^256 (s4 ≤ 2) fold once more as s4·c.
        carry = 0
        let s0 = Self.addCarry(low.l0, q0, &carry)
        let s1 = Self.addCarry(low.l1, q1, &carry)
        let s2 = Self.addCarry(low.l2, q2, &carry)
        let s3 = Self.addCarry(low.l3, q3, &carry)
        let s4 = q4 &+ carry
        carry = 0
        let r0 = Self.multiplyAdd(s0, s4, c.l0, &carry)
        let r1 = Self.multiplyAdd(s1, s4, c.l1, &carry)
        let r2 = Self.multiplyAdd(s2, s4, c.l2, &carry)
        let r3 = Self.addCarry(s3, 0, &carry)
        // A carry out leaves r below 2^132, so adding c once more cannot carry again.
        let folded = Self.addNoReduce(
            Limbs(l0: r0, l1: r1, l2: r2, l3: r3), Self.select(0 &- carry, c, .zero)
        ).sum
        return Self.conditionalSubtract(folded, carry: 0, modulus: modulus)
    }

    /// Whether a plain value is below the modulus, in constant time.
    func isCanonical(_ a: Limbs) -> Bool {
        let (_, borrow) = ScalarField.subtract(a, modulus)
        return borrow == 1
    }

    // MARK: Arithmetic (inputs and outputs below the modulus)

    func add(_ a: Limbs, _ b: Limbs) -> Limbs { PartialField(modulus: modulus).add(a, b) }

    func subtract(_ a: Limbs, _ b: Limbs) -> Limbs {
        let (difference, borrow) = ScalarField.subtract(a, b)
        // Add the modulus back exactly when the subtraction borrowed.
        let mask = 0 &- borrow
        let masked = Limbs(l0: modulus.l0 & mask, l1: modulus.l1 & mask, l2: modulus.l2 & mask, l3: modulus.l3 & mask)
        return ScalarField.addNoReduce(difference, masked).sum
    }

    func negate(_ a: Limbs) -> Limbs { subtract(.zero, a) }

    func multiply(_ a: Limbs, _ b: Limbs) -> Limbs {
        ScalarField.montgomeryMultiply(a, b, modulus: modulus, mPrime: mPrime)
    }

    /// a^(modulus − 2) by Fermat; zero maps to zero (callers reject zero first).
    func inverse(_ a: Limbs) -> Limbs {
        let (exponent, _) = ScalarField.subtract(modulus, Limbs(l0: 2, l1: 0, l2: 0, l3: 0))
        var result = toMontgomery(.one)
        for word in [exponent.l3, exponent.l2, exponent.l1, exponent.l0] {
            for bit in stride(from: 63, through: 0, by: -1) {
                result = multiply(result, result)
                // The exponent is public, so branching on its bits leaks nothing.
                if (word >> UInt64(bit)) & 1 == 1 { result = multiply(result, a) }
            }
        }
        return result
    }

    static func isZero(_ a: Limbs) -> Bool { (a.l0 | a.l1 | a.l2 | a.l3) == 0 }

    // MARK: Limb primitives

    @inline(__always)
    static func addCarry(_ a: UInt64, _ b: UInt64, _ carry: inout UInt64) -> UInt64 {
        let wide = UInt128(a) &+ UInt128(b) &+ UInt128(carry)
        carry = UInt64(truncatingIfNeeded: wide >> 64)
        return UInt64(truncatingIfNeeded: wide)
    }

    @inline(__always)
    static func subtractBorrow(_ a: UInt64, _ b: UInt64, _ borrow: inout UInt64) -> UInt64 {
        let (d1, o1) = a.subtractingReportingOverflow(b)
        let (d2, o2) = d1.subtractingReportingOverflow(borrow)
        borrow = (o1 ? 1 : 0) | (o2 ? 1 : 0)
        return d2
    }

    /// Returns the low word of t + a·b + carry and leaves the high word in carry. One 128-bit sum: the
    /// compiler emits mul, add, adc, where flag tests from addingReportingOverflow cost more.
    @inline(__always)
    static func multiplyAdd(_ t: UInt64, _ a: UInt64, _ b: UInt64, _ carry: inout UInt64) -> UInt64 {
        let wide = UInt128(a) &* UInt128(b) &+ UInt128(t) &+ UInt128(carry)
        carry = UInt64(truncatingIfNeeded: wide >> 64)
        return UInt64(truncatingIfNeeded: wide)
    }

    static func addNoReduce(_ a: Limbs, _ b: Limbs) -> (sum: Limbs, carry: UInt64) {
        var c: UInt64 = 0
        let r0 = addCarry(a.l0, b.l0, &c)
        let r1 = addCarry(a.l1, b.l1, &c)
        let r2 = addCarry(a.l2, b.l2, &c)
        let r3 = addCarry(a.l3, b.l3, &c)
        return (Limbs(l0: r0, l1: r1, l2: r2, l3: r3), c)
    }

    static func subtract(_ a: Limbs, _ b: Limbs) -> (difference: Limbs, borrow: UInt64) {
        var borrow: UInt64 = 0
        let r0 = subtractBorrow(a.l0, b.l0, &borrow)
        let r1 = subtractBorrow(a.l1, b.l1, &borrow)
        let r2 = subtractBorrow(a.l2, b.l2, &borrow)
        let r3 = subtractBorrow(a.l3, b.l3, &borrow)
        return (Limbs(l0: r0, l1: r1, l2: r2, l3: r3), borrow)
    }

    /// Selects `a` when `mask` is all ones and `b` when it is zero.
    @inline(__always)
    static func select(_ mask: UInt64, _ a: Limbs, _ b: Limbs) -> Limbs {
        Limbs(
            l0: (a.l0 & mask) | (b.l0 & ~mask), l1: (a.l1 & mask) | (b.l1 & ~mask),
            l2: (a.l2 & mask) | (b.l2 & ~mask), l3: (a.l3 & mask) | (b.l3 & ~mask))
    }

    /// Subtracts the modulus from (carry, value) when that does not go negative.
    @inline(__always)
    static func conditionalSubtract(_ value: Limbs, carry: UInt64, modulus: Limbs) -> Limbs {
        let (reduced, borrow) = subtract(value, modulus)
        // Keep the reduced value if there was a carry out, or if no borrow happened.
        let keepReduced = carry | (borrow ^ 1)
        return select(0 &- keepReduced, reduced, value)
    }

    /// CIOS Montgomery multiplication: a·b·R⁻¹ mod m for a < 2^256, b < m.
    static func montgomeryMultiply(_ a: Limbs, _ b: Limbs, modulus m: Limbs, mPrime: UInt64) -> Limbs {
        var t = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        // One word of b per round, unrolled: no array on this hot path.
        round(&t, a, b.l0, m, mPrime)
        round(&t, a, b.l1, m, mPrime)
        round(&t, a, b.l2, m, mPrime)
        round(&t, a, b.l3, m, mPrime)
        return conditionalSubtract(Limbs(l0: t.0, l1: t.1, l2: t.2, l3: t.3), carry: t.4, modulus: m)
    }

    /// One CIOS round: t = (t + a·bi + u·m) / 2^64 with u chosen to clear the low word.
    @inline(__always)
    private static func round(
        _ t: inout (UInt64, UInt64, UInt64, UInt64, UInt64), _ a: Limbs, _ bi: UInt64, _ m: Limbs, _ mPrime: UInt64
    ) {
        var c: UInt64 = 0
        let t0 = multiplyAdd(t.0, a.l0, bi, &c)
        let t1 = multiplyAdd(t.1, a.l1, bi, &c)
        let t2 = multiplyAdd(t.2, a.l2, bi, &c)
        let t3 = multiplyAdd(t.3, a.l3, bi, &c)
        var c2: UInt64 = 0
        let t4 = addCarry(t.4, c, &c2)
        let t5 = c2

        let u = t0 &* mPrime
        c = 0
        _ = multiplyAdd(t0, u, m.l0, &c)
        let n0 = multiplyAdd(t1, u, m.l1, &c)
        let n1 = multiplyAdd(t2, u, m.l2, &c)
        let n2 = multiplyAdd(t3, u, m.l3, &c)
        var c3: UInt64 = 0
        let n3 = addCarry(t4, c, &c3)
        t = (n0, n1, n2, n3, t5 &+ c3)
    }
}

/// Modular addition, usable before the Montgomery constants exist.
private struct PartialField {
    let modulus: ScalarField.Limbs

    func add(_ a: ScalarField.Limbs, _ b: ScalarField.Limbs) -> ScalarField.Limbs {
        let (sum, carry) = ScalarField.addNoReduce(a, b)
        return ScalarField.conditionalSubtract(sum, carry: carry, modulus: modulus)
    }
}

extension ScalarField.Limbs {
    /// Reads 32 bytes, big-endian.
    init(bigEndian bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= 32, "a scalar is 32 bytes")
        func word(_ offset: Int) -> UInt64 {
            UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        self.init(l0: word(24), l1: word(16), l2: word(8), l3: word(0))
    }

    /// Reads 32 bytes, little-endian.
    init(littleEndian bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= 32, "a scalar is 32 bytes")
        func word(_ offset: Int) -> UInt64 {
            UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        self.init(l0: word(0), l1: word(8), l2: word(16), l3: word(24))
    }

    /// Writes 32 bytes, big-endian.
    func writeBigEndian(to out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 32, "a scalar is 32 bytes")
        out.storeBytes(of: l3.bigEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: l2.bigEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: l1.bigEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: l0.bigEndian, toByteOffset: 24, as: UInt64.self)
    }

    /// Writes 32 bytes, little-endian.
    func writeLittleEndian(to out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= 32, "a scalar is 32 bytes")
        out.storeBytes(of: l0.littleEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: l1.littleEndian, toByteOffset: 8, as: UInt64.self)
        out.storeBytes(of: l2.littleEndian, toByteOffset: 16, as: UInt64.self)
        out.storeBytes(of: l3.littleEndian, toByteOffset: 24, as: UInt64.self)
    }
}
