/// GF(2⁸) with the Rijndael polynomial x⁸ + x⁴ + x³ + x + 1 (SLIP-0039 §Shamir's secret-sharing).
///
/// Secret bytes only ever go through ``multiply(_:_:)``, which runs in constant time. The log/exp
/// tables serve public values only: share indices and the Lagrange coefficients built from them.
enum GF256 {
    /// `exp[i]` = 3ⁱ for i in 0..<255 (3, i.e. x + 1, generates the multiplicative group).
    static let exp: [UInt8] = tables.exp
    /// `log[a]` for a ≠ 0; `log[0]` is unused.
    static let log: [UInt8] = tables.log

    private static let tables: (exp: [UInt8], log: [UInt8]) = {
        var exp = [UInt8](repeating: 0, count: 255)
        var log = [UInt8](repeating: 0, count: 256)
        var power: UInt16 = 1
        for i in 0..<255 {
            exp[i] = UInt8(power)
            log[Int(power)] = UInt8(i)
            power ^= power << 1  // times (x + 1)
            if power & 0x100 != 0 { power ^= 0x11B }
        }
        return (exp, log)
    }()

    /// The product, by shift-and-add with masks instead of branches or table lookups, so that the
    /// time taken does not depend on either operand.
    @inline(__always)
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        var a = a
        var b = b
        var product: UInt8 = 0
        for _ in 0..<8 {
            product ^= a & (0 &- (b & 1))
            let overflow = 0 &- (a >> 7)
            a = (a << 1) ^ (0x1B & overflow)
            b >>= 1
        }
        return product
    }

    /// The multiplicative inverse of a public, non-zero element.
    static func inverse(ofPublic a: UInt8) -> UInt8 {
        precondition(a != 0, "zero has no inverse in GF(256)")
        return exp[(255 - Int(log[Int(a)])) % 255]
    }
}
