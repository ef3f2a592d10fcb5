import CSodium

/// The random-OT pads of the multiplication (docs/ecdsa.md "Signing"): the four scalars an extended
/// OT's row yields (`q_j`, `q_j ⊕ Δ` or `t_j`). The row goes through one correlation-robust hash,
/// `H256("ote/pad-key", dsid, j (4), row)`, and the four scalars are the first 192 bytes of the
/// ChaCha20 keystream under that key (nonce 0), 48 bytes each read big-endian mod n. Binding the
/// session and direction (`dsid`) makes a replayed extension message yield fresh pads.
///
/// One value serves a direction's rows: the tag and `dsid` fill the hash's first block, absorbed once.
final class OTPads {
    /// Framed `j (4)` and row: the input's tail after the shared prefix.
    private static let tailCount = 4 + 4 + 4 + 32
    private static let padsByteCount = 4 * OTExtension.padByteCount
    /// The keystream drawn per row: 256 bytes, of which the pads read the first 192. libsodium runs
    /// four ChaCha20 blocks at once only for 256 bytes or more, so 256 cost less than 192 (about 250
    /// against 400 ns a row here), and their first 192 bytes are the same keystream.
    private static let streamCount = max(256, padsByteCount)

    private let prefix: SHA2Hasher
    private let hasher: SHA2Hasher
    /// tail (44) || key (32) || keystream (256): secret, wiped when the value goes away.
    private let scratch: UnsafeMutableRawBufferPointer
    private let field = Curve.secp256k1.field

    init(session: [UInt8]) {
        prefix = ECDSAHash.hasher(.sha256, "ote/pad-key", [.bytes(session)])
        hasher = prefix.copy()
        scratch = .allocate(byteCount: Self.tailCount + 32 + Self.streamCount, alignment: 16)
        scratch.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        sodium_memzero(scratch.baseAddress, scratch.count)
        scratch.deallocate()
    }

    /// Writes the four pads of row `index` of `rows` (XORed with `flip`, Δ, when given) to `pads`, as
    /// plain limbs below n.
    func derive(
        rows: UnsafeRawBufferPointer, index: Int, flip: UnsafeRawBufferPointer? = nil,
        into pads: UnsafeMutablePointer<ScalarField.Limbs>
    ) {
        let tail = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<Self.tailCount])
        let key = UnsafeMutableRawBufferPointer(rebasing: scratch[Self.tailCount..<(Self.tailCount + 32)])
        let stream = UnsafeMutableRawBufferPointer(rebasing: scratch[(Self.tailCount + 32)...])
        // len (4) = 4 || j (4) || len (4) = 32 || row (32), all big-endian.
        tail.storeBytes(of: UInt32(4).bigEndian, toByteOffset: 0, as: UInt32.self)
        tail.storeBytes(of: UInt32(index).bigEndian, toByteOffset: 4, as: UInt32.self)
        tail.storeBytes(of: UInt32(32).bigEndian, toByteOffset: 8, as: UInt32.self)
        for byte in 0..<32 { tail[12 + byte] = rows[index * 32 + byte] }
        if let flip {
            for byte in 0..<32 { tail[12 + byte] ^= flip[byte] }
        }
        hasher.restore(from: prefix)
        hasher.update(UnsafeRawBufferPointer(tail))
        hasher.finalize(into: key)
        ECDSAStream.chacha20(key: UnsafeRawBufferPointer(key), into: stream)
        for k in 0..<4 {
            let block = UnsafeRawBufferPointer(stream).baseAddress! + k * OTExtension.padByteCount
            let high = ScalarField.Limbs(
                l0: UInt64(bigEndian: block.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                l1: UInt64(bigEndian: block.loadUnaligned(fromByteOffset: 0, as: UInt64.self)), l2: 0, l3: 0)
            let low = ScalarField.Limbs(bigEndian: UnsafeRawBufferPointer(start: block + 16, count: 32))
            pads[k] = field.reduceWidePlain(low: low, high: high)
        }
    }
}
