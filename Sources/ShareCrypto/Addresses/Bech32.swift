/// BIP-173 bech32 (the witness version 0 checksum; bech32m, BIP-350, is for later versions).
public enum Bech32 {
    private static let alphabet = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)
    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    /// Encodes 5-bit groups under a human-readable part, with the six-character checksum.
    /// - Parameters:
    ///   - humanReadablePart: Lowercase ASCII, e.g. `bc`.
    ///   - values: 5-bit values (each below 32).
    /// - Returns: `hrp` + `1` + the data characters + the checksum.
    public static func encode(humanReadablePart: String, values: [UInt8]) -> String {
        let hrp = Array(humanReadablePart.utf8)
        let expanded = hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 }
        let mod = polymod(expanded + values + [0, 0, 0, 0, 0, 0]) ^ 1
        let checksum = (0..<6).map { UInt8((mod >> (5 * (5 - UInt32($0)))) & 31) }
        return humanReadablePart + "1" + String(decoding: (values + checksum).map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// Regroups 8-bit bytes into 5-bit values, the last one zero-padded (BIP-173's `convertbits`).
    /// - Parameter bytes: The bytes.
    /// - Returns: The 5-bit values.
    public static func fiveBitGroups(_ bytes: [UInt8]) -> [UInt8] {
        var accumulator: UInt32 = 0
        var bits = 0
        var values = [UInt8]()
        for byte in bytes {
            accumulator = (accumulator << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                values.append(UInt8((accumulator >> UInt32(bits)) & 31))
            }
        }
        if bits > 0 { values.append(UInt8((accumulator << UInt32(5 - bits)) & 31)) }
        return values
    }

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = ((checksum & 0x1ff_ffff) << 5) ^ UInt32(value)
            for bit in 0..<5 where (top >> UInt32(bit)) & 1 == 1 { checksum ^= generator[bit] }
        }
        return checksum
    }
}
