/// The two-party random vector OLE of DKLs23 (Functionality 3.5), built on KOS15 oblivious transfer as
/// in DKLs19/23: Bob (the OT-extension receiver) has a random input χ = Σ g_j·β_j, Alice inputs two
/// scalars (`a_1, a_2`), and each ends with an additive share of `χ·a_1` and `χ·a_2`.
///
/// Alice also inputs two random masks `ã_1, ã_2` on further correlations, and proves consistency of
/// her inputs across the OTs: with `θ` hashed from her corrections `τ`, she sends `η_k = ã_k + θ_k·a_k`
/// and `μ = H(ĉ_k + θ_k·c_k)`, which Bob recomputes from his own shares.
enum RandomVectorOLE {
    /// `τ (416 × 4 × 32) || η (2 × 32) || μ (32)`.
    static let replyCount = OTExtension.batchCount * 4 * 32 + 64 + 32

    private static let tauCount = OTExtension.batchCount * 4 * 32
    private static var field: ScalarField { Curve.secp256k1.field }

    /// The public gadget vector `g_j`, the same for every session.
    static let gadget: [Scalar] = (0..<OTExtension.batchCount).map {
        ECDSAHash.scalar("rvole/gadget", [.bytes(ECDSAWire.uint32($0))])
    }

    /// The gadget in Montgomery form, so `multiply(a, g)` gives the plain product `a·g_j`.
    private static let gadgetMontgomery = gadget.map { Curve.secp256k1.field.toMontgomery($0.limbs) }

    struct BobState {
        /// Choice bits β' (all rows), and the rows t_j.
        let choices: SecureBytes
        let rows: SecureBytes
        /// χ = Σ g_j·β_j.
        let chi: Scalar
    }

    /// Bob's round: draws β' (84 bytes) from `random`.
    static func bobStart(keys0: [SecureBytes], keys1: [SecureBytes], id: [UInt8], random: some RandomSource) -> (
        message: [UInt8], state: BobState
    ) {
        let choices = random.secureBytes(count: OTExtension.columnByteCount)
        let (message, rows) = OTExtension.receive(keys0: keys0, keys1: keys1, id: id, choices: choices)
        let chi = choices.withUnsafeBytes { bits in
            var chi = Scalar(0, curve: .secp256k1)
            for j in 0..<OTExtension.batchCount {
                chi = chi + Scalar(UInt64((bits[j / 8] >> UInt8(j % 8)) & 1), curve: .secp256k1) * gadget[j]
            }
            return chi
        }
        return (message, BobState(choices: choices, rows: rows, chi: chi))
    }

    private static func challenge(session: [UInt8], tau: [UInt8]) -> (Scalar, Scalar) {
        (
            ECDSAHash.scalar("rvole/theta", [.bytes(session), .bytes([0]), .bytes(tau)]),
            ECDSAHash.scalar("rvole/theta", [.bytes(session), .bytes([1]), .bytes(tau)])
        )
    }

    private static func proof(session: [UInt8], _ first: Scalar, _ second: Scalar) -> [UInt8] {
        ECDSAHash.digest(
            "rvole/mu", [.bytes(session), .secret(first.rawRepresentation), .secret(second.rawRepresentation)])
    }

    /// Alice's round: checks Bob's extension message, then answers with her random masks `ã_1, ã_2`.
    /// - Returns: Alice's shares `c_1, c_2` and her reply.
    /// - Throws: `ecdsaCheckFailed` naming `peer` when Bob's message fails the extension check.
    static func alice(
        delta: SecureBytes, keys: [SecureBytes], id: [UInt8], session: [UInt8], bobMessage: [UInt8],
        inputs: (Scalar, Scalar),
        masks: (Scalar, Scalar), peer: Int
    ) throws -> (shares: (Scalar, Scalar), reply: [UInt8]) {
        let rows = try OTExtension.send(delta: delta, keys: keys, id: id, message: bobMessage, peer: peer)
        // The inner loops stay on field limbs: no per-operation encoding of secret scalars.
        let alpha = [inputs.0, inputs.1, masks.0, masks.1].map(\.limbs)
        var sums = [ScalarField.Limbs](repeating: .zero, count: 4)
        var tau = [UInt8](repeating: 0, count: tauCount)
        tau.withUnsafeMutableBytes { out in
            for j in 0..<OTExtension.batchCount {
                let zero = OTExtension.pad(session: session, rows: rows, index: j)
                let one = OTExtension.pad(session: session, rows: rows, index: j, flippedBy: delta)
                for k in 0..<4 {
                    let pad = zero[k].limbs
                    sums[k] = field.add(sums[k], field.multiply(pad, gadgetMontgomery[j]))
                    let correction = field.add(field.subtract(one[k].limbs, pad), alpha[k])
                    let slot = (j * 4 + k) * 32
                    Curve.secp256k1.write(
                        correction, to: UnsafeMutableRawBufferPointer(rebasing: out[slot..<(slot + 32)]))
                }
            }
        }
        let shares = sums.map { Scalar(plain: $0, curve: .secp256k1) }
        let theta = challenge(session: session, tau: tau)
        let eta = (masks.0 + theta.0 * inputs.0, masks.1 + theta.1 * inputs.1)
        let mu = proof(session: session, shares[2] + theta.0 * shares[0], shares[3] + theta.1 * shares[1])
        let reply = tau + eta.0.rawRepresentation.revealedBytes() + eta.1.rawRepresentation.revealedBytes() + mu
        return ((shares[0], shares[1]), reply)
    }

    /// Bob's finish: his shares of `χ·a_1` and `χ·a_2`.
    /// - Throws: `ecdsaCheckFailed` naming `peer` when Alice's proof of consistency fails;
    ///   `invalidEncoding` for a reply that does not parse.
    static func bobFinish(state: BobState, session: [UInt8], reply: [UInt8], peer: Int) throws -> (Scalar, Scalar) {
        var wire = ECDSAWire(reply, what: "multiplication reply from party \(peer)")
        let tauBytes = try wire.take(tauCount)
        var sums = [ScalarField.Limbs](repeating: .zero, count: 4)
        // The choice bits are read in place; the rows go to the pads as secrets.
        try tauBytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) throws in
            for j in 0..<OTExtension.batchCount {
                let bit = state.choices.withUnsafeBytes { UInt64(($0[j / 8] >> UInt8(j % 8)) & 1) }
                let mask = 0 &- bit
                let pad = OTExtension.pad(session: session, rows: state.rows, index: j)
                for k in 0..<4 {
                    let slot = (j * 4 + k) * 32
                    let tau = Curve.secp256k1.limbs(from: UnsafeRawBufferPointer(rebasing: input[slot..<(slot + 32)]))
                    guard field.isCanonical(tau) else {
                        throw ShareCryptoError(
                            .invalidEncoding, "multiplication reply from party \(peer): a τ is not below n")
                    }
                    // β_j·τ_j[k] by a mask, not a branch on the secret bit.
                    let term = field.subtract(ScalarField.select(mask, tau, .zero), pad[k].limbs)
                    sums[k] = field.add(sums[k], field.multiply(term, gadgetMontgomery[j]))
                }
            }
        }
        let shares = sums.map { Scalar(plain: $0, curve: .secp256k1) }
        let eta = (try wire.scalar(), try wire.scalar())
        let mu = try wire.take(32)
        try wire.finish()
        let theta = challenge(session: session, tau: tauBytes)
        let expected = proof(
            session: session, eta.0 * state.chi - shares[2] - theta.0 * shares[0],
            eta.1 * state.chi - shares[3] - theta.1 * shares[1])
        guard constantTimeEquals(expected, mu) else {
            throw ShareCryptoError(.ecdsaCheckFailed, "the multiplication's consistency proof failed", party: peer)
        }
        return (shares[0], shares[1])
    }
}
