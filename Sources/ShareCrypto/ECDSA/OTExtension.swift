/// KOS15 oblivious-transfer extension (Keller–Orsini–Scholl, CRYPTO 2015) with its consistency check
/// made non-interactive by Fiat–Shamir, over the 256 base OTs of a pair setup.
///
/// The receiver extends `rowCount` OTs with choice bits `β'`; the last `checkRowCount` are random
/// and only feed the check (they are sacrificed). Rows and the check work on 256-bit values; the
/// check runs over GF(2^128) on each 128-bit half.
enum OTExtension {
    /// OTs the multiplication uses: κ + 2·s with κ = 256 and s = 80 (DKLs23's ξ).
    static let batchCount = 416
    /// Rows sacrificed by the check.
    static let checkRowCount = 256
    static let rowCount = batchCount + checkRowCount
    static let columnByteCount = rowCount / 8
    /// `u (256 × 84) || x (16) || t (32)`.
    static let receiverMessageCount = BaseOT.count * columnByteCount + 48

    /// Column l of an extension matrix: secret, as its key is.
    private static func column(key: SecureBytes, id: [UInt8], index: Int) -> SecureBytes {
        ECDSAHash.secretExpand(
            "ote/prg", [.secret(key), .bytes(id), .bytes(ECDSAWire.uint32(index))], count: columnByteCount)
    }

    private static func challenges(id: [UInt8], u: [UInt8]) -> [GF128.Element] {
        let bytes = ECDSAHash.expand("ote/check", [.bytes(id), .bytes(u)], count: rowCount * 16)
        return (0..<rowCount).map { GF128.Element(bytes[($0 * 16)..<($0 * 16 + 16)]) }
    }

    /// Rows from columns: bit l of row j is bit j of column l (bits little-endian within a byte).
    private static func transpose(_ columns: [SecureBytes]) -> SecureBytes {
        SecureBytes(count: rowCount * 32) { out in
            out.initializeMemory(as: UInt8.self, repeating: 0)
            for l in 0..<BaseOT.count {
                columns[l].withUnsafeBytes { column in
                    let byte = l / 8
                    let shift = UInt8(l % 8)
                    for j in 0..<rowCount {
                        out[j &* 32 &+ byte] |= ((column[j / 8] &>> UInt8(j % 8)) & 1) &<< shift
                    }
                }
            }
        }
    }

    /// `Σ χ_j·row_j` on each 128-bit half of the rows.
    private static func combine(_ rows: SecureBytes, _ chi: [GF128.Element]) -> (GF128.Element, GF128.Element) {
        rows.withUnsafeBytes { rows in
            var sum = (GF128.Element.zero, GF128.Element.zero)
            for j in 0..<rowCount {
                sum = (
                    sum.0 ^ (chi[j] * GF128.Element(rows, at: j * 32)),
                    sum.1 ^ (chi[j] * GF128.Element(rows, at: j * 32 + 16))
                )
            }
            return sum
        }
    }

    /// The receiver's message for choice bits `choices` (`rowCount` bits), and its rows `t_j`.
    static func receive(keys0: [SecureBytes], keys1: [SecureBytes], id: [UInt8], choices: SecureBytes) -> (
        message: [UInt8], rows: SecureBytes
    ) {
        var columns = [SecureBytes]()
        var u = [UInt8]()
        u.reserveCapacity(BaseOT.count * columnByteCount)
        var x = GF128.Element.zero
        choices.withUnsafeBytes { bits in
            for l in 0..<BaseOT.count {
                let t0 = column(key: keys0[l], id: id, index: l)
                let t1 = column(key: keys1[l], id: id, index: l)
                t0.withUnsafeBytes { t0 in
                    t1.withUnsafeBytes { t1 in
                        for byte in 0..<columnByteCount { u.append(t0[byte] ^ t1[byte] ^ bits[byte]) }
                    }
                }
                columns.append(t0)
            }
        }
        let rows = transpose(columns)
        let chi = challenges(id: id, u: u)
        choices.withUnsafeBytes { bits in
            for j in 0..<rowCount {
                let bit = UInt64((bits[j / 8] >> UInt8(j % 8)) & 1)
                x = x ^ (chi[j] * GF128.Element(low: bit, high: 0))
            }
        }
        let t = combine(rows, chi)
        return (u + x.bytes + t.0.bytes + t.1.bytes, rows)
    }

    /// The sender's rows `q_j = t_j ⊕ β'_j·Δ`, after the consistency check of the receiver's message.
    /// - Throws: `ecdsaCheckFailed` naming `peer` when the check fails.
    static func send(delta: SecureBytes, keys: [SecureBytes], id: [UInt8], message: [UInt8], peer: Int) throws
        -> SecureBytes
    {
        precondition(message.count == receiverMessageCount, "the caller checks the message length")
        let u = Array(message[0..<(BaseOT.count * columnByteCount)])
        var columns = [SecureBytes]()
        delta.withUnsafeBytes { deltaBits in
            for l in 0..<BaseOT.count {
                let mask = 0 &- ((deltaBits[l / 8] >> UInt8(l % 8)) & 1)
                let keyed = column(key: keys[l], id: id, index: l)
                columns.append(
                    SecureBytes(count: columnByteCount) { q in
                        keyed.withUnsafeBytes { keyed in
                            for byte in 0..<columnByteCount {
                                q[byte] = keyed[byte] ^ (u[l * columnByteCount + byte] & mask)
                            }
                        }
                    })
            }
        }
        let rows = transpose(columns)
        let q = combine(rows, challenges(id: id, u: u))
        let tail = message.count - 48
        let x = GF128.Element(message[tail..<(tail + 16)])
        let t = (GF128.Element(message[(tail + 16)..<(tail + 32)]), GF128.Element(message[(tail + 32)..<(tail + 48)]))
        let deltaHalves = delta.withUnsafeBytes { (GF128.Element($0, at: 0), GF128.Element($0, at: 16)) }
        let expected = (t.0 ^ (x * deltaHalves.0), t.1 ^ (x * deltaHalves.1))
        guard constantTimeEquals(q.0.bytes + q.1.bytes, expected.0.bytes + expected.1.bytes) else {
            throw ShareCryptoError(.ecdsaCheckFailed, "the OT-extension consistency check failed", party: peer)
        }
        return rows
    }

    /// The random-OT pad of row `j`: four scalars from the row (`q_j`, `q_j ⊕ Δ` or `t_j`), bound to
    /// the session and direction so a replayed extension message yields fresh pads.
    static func pad(session: [UInt8], rows: SecureBytes, index: Int, flippedBy delta: SecureBytes? = nil) -> [Scalar] {
        let row = SecureBytes(count: 32) { out in
            rows.withUnsafeBytes { rows in
                out.copyMemory(from: UnsafeRawBufferPointer(rebasing: rows[(index * 32)..<(index * 32 + 32)]))
            }
            delta?.withUnsafeBytes { delta in
                for byte in 0..<32 { out[byte] ^= delta[byte] }
            }
        }
        return (0..<4).map {
            ECDSAHash.scalar(
                "ote/pad", [.bytes(session), .bytes(ECDSAWire.uint32(index)), .bytes([UInt8($0)]), .secret(row)])
        }
    }
}
