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

    /// The gadget's plain limbs, for χ and the sums `Σ g_j·x_j`.
    private static let gadgetLimbs = gadget.map(\.limbs)

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
        // χ = Σ g_j·β_j: masked additions on limbs, the bits being secret.
        let chi = choices.withUnsafeBytes { bits in
            var sum = ScalarField.Limbs.zero
            for j in 0..<OTExtension.batchCount {
                let mask = 0 &- UInt64((bits[j / 8] >> UInt8(j % 8)) & 1)
                sum = field.add(sum, ScalarField.select(mask, gadgetLimbs[j], .zero))
            }
            return Scalar(plain: sum, curve: .secp256k1)
        }
        return (message, BobState(choices: choices, rows: rows, chi: chi))
    }

    /// θ_0 and θ_1: τ hashed once, `d = H256("rvole/tau", dsid, τ)`, then `Hn("rvole/theta", b (1), d)`.
    private static func challenge(session: [UInt8], tau: [UInt8]) -> (Scalar, Scalar) {
        let digest = ECDSAHash.digest("rvole/tau", [.bytes(session), .bytes(tau)])
        return (
            ECDSAHash.scalar("rvole/theta", [.bytes([0]), .bytes(digest)]),
            ECDSAHash.scalar("rvole/theta", [.bytes([1]), .bytes(digest)])
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
        var sums = [ScalarField.ProductSum](repeating: .init(), count: 4)
        var tau = [UInt8](repeating: 0, count: tauCount)
        let derivation = OTPads(session: session)
        withUnsafeTemporaryAllocation(of: ScalarField.Limbs.self, capacity: 8) { pads in
            let zero = pads.baseAddress!
            let one = zero + 4
            rows.withUnsafeBytes { rows in
                delta.withUnsafeBytes { delta in
                    tau.withUnsafeMutableBytes { out in
                        for j in 0..<OTExtension.batchCount {
                            derivation.derive(rows: rows, index: j, into: zero)
                            derivation.derive(rows: rows, index: j, flip: delta, into: one)
                            for k in 0..<4 {
                                sums[k].add(zero[k], times: gadgetLimbs[j])
                                let correction = field.add(field.subtract(one[k], zero[k]), alpha[k])
                                let slot = (j * 4 + k) * 32
                                Curve.secp256k1.write(
                                    correction, to: UnsafeMutableRawBufferPointer(rebasing: out[slot..<(slot + 32)]))
                            }
                        }
                    }
                }
            }
            for index in 0..<8 { pads[index] = .zero }
        }
        let shares = (0..<4).map { Scalar(plain: sums[$0].reduced(in: field), curve: .secp256k1) }
        let theta = challenge(session: session, tau: tau)
        let eta = (masks.0 + theta.0 * inputs.0, masks.1 + theta.1 * inputs.1)
        let mu = proof(session: session, shares[2] + theta.0 * shares[0], shares[3] + theta.1 * shares[1])
        let reply = ECDSAWire.joined(
            tau, eta.0.rawRepresentation.revealedBytes(), eta.1.rawRepresentation.revealedBytes(), mu)
        return ((shares[0], shares[1]), reply)
    }

    /// Bob's finish: his shares of `χ·a_1` and `χ·a_2`.
    /// - Throws: `ecdsaCheckFailed` naming `peer` when Alice's proof of consistency fails;
    ///   `invalidEncoding` for a reply that does not parse.
    static func bobFinish(state: BobState, session: [UInt8], reply: [UInt8], peer: Int) throws -> (Scalar, Scalar) {
        var wire = ECDSAWire(reply, what: "multiplication reply from party \(peer)")
        let tauBytes = try wire.take(tauCount)
        var sums = [ScalarField.ProductSum](repeating: .init(), count: 4)
        let derivation = OTPads(session: session)
        // The choice bits and the rows are read in place.
        try withUnsafeTemporaryAllocation(of: ScalarField.Limbs.self, capacity: 4) { pads in
            defer { for index in 0..<4 { pads[index] = .zero } }
            try tauBytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) throws in
                try state.rows.withUnsafeBytes { rows in
                    try state.choices.withUnsafeBytes { bits in
                        for j in 0..<OTExtension.batchCount {
                            let mask = 0 &- UInt64((bits[j / 8] >> UInt8(j % 8)) & 1)
                            derivation.derive(rows: rows, index: j, into: pads.baseAddress!)
                            for k in 0..<4 {
                                let slot = (j * 4 + k) * 32
                                let tau = Curve.secp256k1.limbs(
                                    from: UnsafeRawBufferPointer(rebasing: input[slot..<(slot + 32)]))
                                guard field.isCanonical(tau) else {
                                    throw ShareCryptoError(
                                        .invalidEncoding, "multiplication reply from party \(peer): a τ is not below n")
                                }
                                // β_j·τ_j[k] by a mask, not a branch on the secret bit.
                                let term = field.subtract(ScalarField.select(mask, tau, .zero), pads[k])
                                sums[k].add(term, times: gadgetLimbs[j])
                            }
                        }
                    }
                }
            }
        }
        let shares = (0..<4).map { Scalar(plain: sums[$0].reduced(in: field), curve: .secp256k1) }
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
