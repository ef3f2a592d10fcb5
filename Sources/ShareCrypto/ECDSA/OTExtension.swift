/// KOS15 oblivious-transfer extension (Keller–Orsini–Scholl, CRYPTO 2015) with its consistency check
/// made non-interactive by Fiat–Shamir, over the 256 base OTs of a pair setup.
///
/// The receiver extends `rowCount` OTs with choice bits `β'`; the last `checkRowCount` are random
/// and only feed the check (they are sacrificed). Rows and the check work on 256-bit values; the
/// check runs over GF(2^128) on each 128-bit half.
///
/// The expansions are keystreams (docs/ecdsa.md "Keystreams"): a column is XChaCha20 under its
/// base-OT key, the challenges ChaCha20 under a hash of the receiver's matrix, a row's four pads
/// ChaCha20 under a hash of the row (``OTPads``). Hashing stays where the protocol needs a random
/// oracle (the check's challenges, the correlation-robust pad hash); stretching is a stream cipher's
/// work, a fraction of a hash's cost per byte.
enum OTExtension {
    /// OTs the multiplication uses: κ + 2·s with κ = 256 and s = 80 (DKLs23's ξ).
    static let batchCount = 416
    /// Rows sacrificed by the check.
    static let checkRowCount = 256
    static let rowCount = batchCount + checkRowCount
    static let columnByteCount = rowCount / 8
    /// `u (256 × 84) || x (16) || t (32)`.
    static let receiverMessageCount = BaseOT.count * columnByteCount + 48
    /// Bytes of keystream behind each pad scalar: 384 bits reduced mod n leave a bias below 2^-128.
    static let padByteCount = 48

    private static var matrixByteCount: Int { BaseOT.count * columnByteCount }

    /// Writes every column of one key set: column l is the first 84 bytes of the XChaCha20 keystream
    /// under key l with the extension id's first 24 bytes as nonce (fresh ids never repeat a nonce
    /// under a base-OT key, which every session reuses).
    private static func writeColumns(_ out: UnsafeMutableRawBufferPointer, keys: [SecureBytes], id: [UInt8]) {
        precondition(keys.count == BaseOT.count && out.count == matrixByteCount, "256 keys fill 256 columns")
        id.withUnsafeBytes { nonce in
            for l in 0..<BaseOT.count {
                keys[l].withUnsafeBytes { key in
                    ECDSAStream.xchacha20(
                        key: key, nonce: nonce,
                        into: UnsafeMutableRawBufferPointer(
                            rebasing: out[(l * columnByteCount)..<((l + 1) * columnByteCount)]))
                }
            }
        }
    }

    /// The check's challenges χ_j, two words (low, high) each: the ChaCha20 keystream under
    /// `H256("ote/check-key", oid, u)`, 16 bytes per row. Public, as u is.
    private static func challenges(id: [UInt8], u: [UInt8]) -> [UInt64] {
        let key = ECDSAHash.digest("ote/check-key", [.bytes(id), .bytes(u)])
        var stream = [UInt8](repeating: 0, count: rowCount * 16)
        key.withUnsafeBytes { key in stream.withUnsafeMutableBytes { ECDSAStream.chacha20(key: key, into: $0) } }
        return stream.withUnsafeBytes { bytes in
            (0..<(rowCount * 2)).map {
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self))
            }
        }
    }

    /// Rows from columns: bit l of row j is bit j of column l (bits little-endian within a byte), by
    /// 8 × 8 bit blocks: byte ⌊j/8⌋ of columns 8c…8c+7 is one block, whose transpose is byte c of rows
    /// 8⌊j/8⌋…8⌊j/8⌋+7.
    static func transpose(_ columns: UnsafeRawBufferPointer) -> SecureBytes {
        SecureBytes(count: rowCount * 32) { out in
            for group in 0..<(BaseOT.count / 8) {
                for rowByte in 0..<columnByteCount {
                    var block: UInt64 = 0
                    for c in 0..<8 {
                        block |= UInt64(columns[(group * 8 + c) * columnByteCount + rowByte]) << UInt64(8 * c)
                    }
                    var t = (block ^ (block >> 7)) & 0x00AA_00AA_00AA_00AA
                    block ^= t ^ (t << 7)
                    t = (block ^ (block >> 14)) & 0x0000_CCCC_0000_CCCC
                    block ^= t ^ (t << 14)
                    t = (block ^ (block >> 28)) & 0x0000_0000_F0F0_F0F0
                    block ^= t ^ (t << 28)
                    for r in 0..<8 {
                        out[(rowByte * 8 + r) * 32 + group] = UInt8(truncatingIfNeeded: block >> UInt64(8 * r))
                    }
                }
            }
        }
    }

    /// `Σ χ_j·row_j` on each 128-bit half of the rows.
    private static func combine(_ rows: SecureBytes, _ chi: [UInt64]) -> (GF128.Element, GF128.Element) {
        rows.withUnsafeBytes { rows in
            chi.withUnsafeBufferPointer { GF128.weightedSums(rows: rows, chi: $0, count: rowCount) }
        }
    }

    /// The receiver's message for choice bits `choices` (`rowCount` bits), and its rows `t_j`.
    static func receive(keys0: [SecureBytes], keys1: [SecureBytes], id: [UInt8], choices: SecureBytes) -> (
        message: [UInt8], rows: SecureBytes
    ) {
        var u = [UInt8](repeating: 0, count: matrixByteCount)
        var rows = SecureBytes(zeros: 0)
        // Both key sets' columns live only in this wiped scratch; t0's become the rows.
        _ = SecureBytes(count: 2 * matrixByteCount) { scratch in
            let t0 = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<matrixByteCount])
            let t1 = UnsafeMutableRawBufferPointer(rebasing: scratch[matrixByteCount...])
            writeColumns(t0, keys: keys0, id: id)
            writeColumns(t1, keys: keys1, id: id)
            choices.withUnsafeBytes { bits in
                u.withUnsafeMutableBytes { u in
                    for l in 0..<BaseOT.count {
                        for byte in 0..<columnByteCount {
                            let i = l * columnByteCount + byte
                            u[i] = t0[i] ^ t1[i] ^ bits[byte]
                        }
                    }
                }
            }
            rows = transpose(UnsafeRawBufferPointer(t0))
        }
        let chi = challenges(id: id, u: u)
        // x = Σ β'_j·χ_j: a masked sum, the bits being secret.
        var x = GF128.Element.zero
        choices.withUnsafeBytes { bits in
            for j in 0..<rowCount {
                let mask = 0 &- UInt64((bits[j / 8] >> UInt8(j % 8)) & 1)
                x = x ^ GF128.Element(low: chi[2 * j] & mask, high: chi[2 * j + 1] & mask)
            }
        }
        let t = combine(rows, chi)
        return (ECDSAWire.joined(u, x.bytes, t.0.bytes, t.1.bytes), rows)
    }

    /// The sender's rows `q_j = t_j ⊕ β'_j·Δ`, after the consistency check of the receiver's message.
    /// - Throws: `ecdsaCheckFailed` naming `peer` when the check fails.
    static func send(delta: SecureBytes, keys: [SecureBytes], id: [UInt8], message: [UInt8], peer: Int) throws
        -> SecureBytes
    {
        precondition(message.count == receiverMessageCount, "the caller checks the message length")
        let u = Array(message[0..<matrixByteCount])
        var rows = SecureBytes(zeros: 0)
        _ = SecureBytes(count: matrixByteCount) { q in
            writeColumns(q, keys: keys, id: id)
            delta.withUnsafeBytes { deltaBits in
                u.withUnsafeBytes { u in
                    for l in 0..<BaseOT.count {
                        let mask = 0 &- ((deltaBits[l / 8] >> UInt8(l % 8)) & 1)
                        for byte in 0..<columnByteCount {
                            q[l * columnByteCount + byte] ^= u[l * columnByteCount + byte] & mask
                        }
                    }
                }
            }
            rows = transpose(UnsafeRawBufferPointer(q))
        }
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
}
