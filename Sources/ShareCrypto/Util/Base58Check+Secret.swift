extension Base58Check {
    /// Encodes a secret payload with its checksum (a WIF private key, docs/eject.md), into a secret
    /// buffer: the digits and every intermediate live in wiped buffers. The conversion's time depends
    /// on the payload's leading zero bytes (as for public data), which is tolerated for the one
    /// deliberate export of a key it serves.
    /// - Parameter payload: The secret bytes.
    /// - Returns: The Base58Check text as ASCII bytes.
    public static func encodeSecret(_ payload: SecureBytes) -> SecureBytes {
        let sum = Array(payload.withUnsafeBytes { SHA256.hash(SHA256.hash($0)) }.prefix(4))
        let bytes = SecureBytes.concatenating([payload, SecureBytes(copying: sum)])
        // log(256)/log(58) < 1.37: enough base-58 digits for any value of this many bytes.
        let capacity = bytes.count * 137 / 100 + 1
        var used = 0
        var zeros = 0
        // Base-58 digits, least significant first, computed in a wiped scratch buffer.
        let digits = SecureBytes(count: capacity) { scratch in
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
            bytes.withUnsafeBytes { input in
                zeros = input.prefix { $0 == 0 }.count
                for byte in input[zeros...] {
                    var carry = Int(byte)
                    for i in 0..<used {
                        carry += Int(scratch[i]) << 8
                        scratch[i] = UInt8(carry % 58)
                        carry /= 58
                    }
                    while carry > 0 {
                        scratch[used] = UInt8(carry % 58)
                        used += 1
                        carry /= 58
                    }
                }
            }
        }
        return SecureBytes(count: zeros + used) { out in
            for i in 0..<zeros { out[i] = alphabet[0] }
            digits.withUnsafeBytes { scratch in
                for i in 0..<used { out[zeros + i] = alphabet[Int(scratch[used - 1 - i])] }
            }
        }
    }
}
