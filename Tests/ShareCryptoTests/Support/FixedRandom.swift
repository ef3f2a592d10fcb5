import ShareCrypto

/// A random source that replays fixed draws, one per `fill`, in order: how vectors that publish
/// their "randomness" (RFC 9591 nonce randomness, the BIP draft's rand') are reproduced.
/// A draw of the wrong size, or one too many, fails the test run loudly.
final class FixedRandom: RandomSource {
    private let draws: Locked<[[UInt8]]>

    init(_ draws: [[UInt8]]) { self.draws = Locked(draws) }

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        let draw = draws.withLock { draws -> [UInt8] in
            precondition(!draws.isEmpty, "FixedRandom: more draws than the vector provides")
            return draws.removeFirst()
        }
        precondition(
            draw.count == buffer.count, "FixedRandom: a \(buffer.count)-byte draw, the vector gives \(draw.count)")
        buffer.copyBytes(from: draw)
    }

    /// Whether every fixed draw was used.
    var isExhausted: Bool { draws.withLock { $0.isEmpty } }
}
