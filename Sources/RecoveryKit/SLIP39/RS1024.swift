/// The RS1024 checksum: a Reed–Solomon code over GF(1024) with three check words (SLIP-0039 §Checksum).
///
/// Words are fed one at a time, so share words never need to sit in a plain array.
struct RS1024 {
    /// Number of checksum words.
    static let checksumCount = 3

    private static let generator: [UInt32] = [
        0xE0E040, 0x1C1C080, 0x3838100, 0x7070200, 0xE0E0009,
        0x1C0C2412, 0x38086C24, 0x3090FC48, 0x21B1F890, 0x3F3F120,
    ]

    private var state: UInt32 = 1

    /// Starts a checksum with the customization string: "shamir_extendable" when the extendable flag
    /// is set, "shamir" otherwise.
    init(extendable: Bool) {
        for byte in (extendable ? "shamir_extendable" : "shamir").utf8 { append(Int(byte)) }
    }

    /// Feeds one 10-bit word (or one customization byte).
    mutating func append(_ value: Int) {
        let top = state >> 20
        state = (state & 0xFFFFF) << 10 ^ UInt32(value)
        for bit in 0..<10 {
            // A mask instead of a branch: the words being checked are share data.
            state ^= Self.generator[bit] & (0 &- ((top >> UInt32(bit)) & 1))
        }
    }

    /// Whether the words fed so far, check words last, carry a valid checksum.
    var isValid: Bool { state == 1 }

    /// The three check words that complete the data words fed so far.
    func checkWords() -> [Int] {
        var final = self
        for _ in 0..<Self.checksumCount { final.append(0) }
        let polymod = final.state ^ 1
        return (0..<Self.checksumCount).map { Int(polymod >> UInt32(10 * (Self.checksumCount - 1 - $0))) & 1023 }
    }
}
