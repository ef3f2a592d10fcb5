/// The batched simplest oblivious transfer (Chou–Orlandi; batched as in ePrint 2021/682) over
/// secp256k1: κ = 256 random OTs from one sender value `a` (with a Schnorr proof of knowledge of `a`)
/// to a receiver whose choice bits are the OT-extension sender's correlation Δ.
///
/// - sender: `A = a·G`, proof `(K, z)` with `z = k + e·a`, `e` the `base-ot/proof` hash;
/// - receiver, bit `Δ_l`: `B_l = b_l·G + Δ_l·A`, key `H(base-ot/key, context, l, b_l·A)`;
/// - sender keys: `H(…, l, a·B_l)` for bit 0 and `H(…, l, a·(B_l − A))` for bit 1.
enum BaseOT {
    static let count = 256

    struct SenderMessage {
        let a: Point
        let proofCommitment: Point
        let proofResponse: Scalar

        var bytes: [UInt8] {
            a.rawRepresentation + proofCommitment.rawRepresentation + proofResponse.rawRepresentation.revealedBytes()
        }
        static let byteCount = 33 + 33 + 32
    }

    private static func challenge(context: [UInt8], a: Point, commitment: Point) -> Scalar {
        ECDSAHash.scalar(
            "base-ot/proof", [.bytes(context), .bytes(a.rawRepresentation), .bytes(commitment.rawRepresentation)])
    }

    private static func key(context: [UInt8], index: Int, shared: Point) -> SecureBytes {
        ECDSAHash.secretDigest(
            "base-ot/key", [.bytes(context), .bytes(ECDSAWire.uint32(index)), .bytes(shared.rawRepresentation)])
    }

    /// The sender's first move: `a`, `A` and the proof. Draws `a` then `k` from `random`.
    static func senderStart(context: [UInt8], random: some RandomSource) throws -> (a: Scalar, message: SenderMessage) {
        let a = Scalar.random(on: .secp256k1, using: random)
        let k = Scalar.random(on: .secp256k1, using: random)
        let bigA = try Point(generatorTimes: a)
        let commitment = try Point(generatorTimes: k)
        let e = challenge(context: context, a: bigA, commitment: commitment)
        return (a, SenderMessage(a: bigA, proofCommitment: commitment, proofResponse: k + e * a))
    }

    /// The receiver's 256 scalars `b_l`, drawn from `random` in order.
    static func receiverScalars(random: some RandomSource) -> [Scalar] {
        (0..<count).map { _ in Scalar.random(on: .secp256k1, using: random) }
    }

    /// The receiver's move for choice bits `delta` (32 bytes, bit l = byte l/8 bit l%8) with the
    /// scalars `b` of ``receiverScalars(random:)``: the points `B_l` and its keys.
    static func receive(
        context: [UInt8], message: SenderMessage, delta: SecureBytes, scalars: [Scalar], peer: Int
    ) throws -> (points: [Point], keys: [SecureBytes]) {
        precondition(scalars.count == count, "one receiver scalar per base OT")
        let e = challenge(context: context, a: message.a, commitment: message.proofCommitment)
        let check = try Point.sum([try message.a.multiplied(by: e), message.proofCommitment])
        guard try Point(generatorTimes: message.proofResponse) == check else {
            throw ShareCryptoError(
                .ecdsaCheckFailed, "the base OT sender's proof of knowledge does not verify", party: peer)
        }
        var points = [Point]()
        var keys = [SecureBytes]()
        // Δ's bits are read in place: no plain copy of the correlation.
        try delta.withUnsafeBytes { (bits) throws in
            for (index, b) in scalars.enumerated() {
                let plain = try Point(generatorTimes: b)
                let shifted = try plain + message.a
                // Select by the secret bit without a branch: mask the two points together, encoding
                // and parsed form, so the chosen point needs no second parse (a square root).
                let mask = 0 &- ((bits[index / 8] >> UInt8(index % 8)) & 1)
                points.append(Point.select(mask, plain, shifted))
                keys.append(key(context: context, index: index, shared: try message.a.multiplied(by: b)))
            }
        }
        return (points, keys)
    }

    /// The sender's keys for both choices of every OT.
    static func senderKeys(context: [UInt8], a: Scalar, bigA: Point, points: [Point], peer: Int) throws -> (
        zero: [SecureBytes], one: [SecureBytes]
    ) {
        var zero = [SecureBytes]()
        var one = [SecureBytes]()
        // a·(B_l − A) = a·B_l − a·A: one multiplication per OT, and a·A once.
        let aA = try bigA.multiplied(by: a).negated
        for (index, point) in points.enumerated() {
            let aB = try point.multiplied(by: a)
            zero.append(key(context: context, index: index, shared: aB))
            guard let shifted = Point.sumAllowingIdentity([aB, aA]) else {
                throw ShareCryptoError(.ecdsaCheckFailed, "a base OT point equals the sender's A", party: peer)
            }
            one.append(key(context: context, index: index, shared: shifted))
        }
        return (zero, one)
    }
}

extension Point {
    /// `a` when `mask` is 0, `b` when it is 0xff, without a branch: both of one curve.
    fileprivate static func select(_ mask: UInt8, _ a: Point, _ b: Point) -> Point {
        func mix(_ x: [UInt8], _ y: [UInt8]) -> [UInt8] { zip(x, y).map { ($0 & ~mask) | ($1 & mask) } }
        return Point(
            curve: a.curve, rawRepresentation: mix(a.rawRepresentation, b.rawRepresentation),
            parsed: mix(a.parsed, b.parsed))
    }
}
