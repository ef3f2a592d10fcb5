/// The messages of the ECDSA pair setup and signing rounds (docs/ecdsa.md), each read from its fixed
/// layout and written back to it. Reading checks the layout only (lengths, points on the curve,
/// scalars below n); the rounds check what the values mean. A value read from bytes writes exactly
/// those bytes again: the layouts have one encoding per value.
package enum ECDSAMessage {
    /// Pair setup round 1, 130 bytes: `A (33) || K (33) || z (32) || zero-share contribution (32)`.
    package struct SetupRound1 {
        package let a: Point
        package let proofCommitment: Point
        package let proofResponse: Scalar
        package let contribution: SecureBytes

        /// Reads the message `sender` sent.
        /// - Throws: `invalidEncoding` when it does not parse.
        package init(_ bytes: [UInt8], from sender: Int) throws {
            var wire = ECDSAWire(bytes, what: "pair setup round 1 from party \(sender)")
            a = try wire.point()
            proofCommitment = try wire.point()
            proofResponse = try wire.scalar()
            contribution = try wire.secret(32)
            try wire.finish()
        }

        package var bytes: [UInt8] {
            a.rawRepresentation + proofCommitment.rawRepresentation + proofResponse.rawRepresentation.revealedBytes()
                + contribution.revealedBytes()
        }
    }

    /// Pair setup round 2, 256 × 33 bytes: the base OT receiver's points `B_0 || … || B_255`.
    package struct SetupRound2 {
        package let points: [Point]

        /// Reads the message `sender` sent.
        /// - Throws: `invalidEncoding` when it does not parse.
        package init(_ bytes: [UInt8], from sender: Int) throws {
            var wire = ECDSAWire(bytes, what: "pair setup round 2 from party \(sender)")
            points = try (0..<BaseOT.count).map { _ in try wire.point() }
            try wire.finish()
        }

        package var bytes: [UInt8] { points.flatMap(\.rawRepresentation) }
    }

    /// Signing round 1, 21,616 bytes: `nonce (32) || commitment to R (32) || OT-extension message`.
    package struct SigningRound1 {
        package let nonce: [UInt8]
        package let commitment: [UInt8]
        package let extensionMessage: [UInt8]

        /// Reads the message `sender` sent.
        /// - Throws: `invalidEncoding` when it does not parse.
        package init(_ bytes: [UInt8], from sender: Int) throws {
            var wire = ECDSAWire(bytes, what: "round 1 from party \(sender)")
            nonce = try wire.take(32)
            commitment = try wire.take(32)
            extensionMessage = try wire.take(OTExtension.receiverMessageCount)
            try wire.finish()
        }

        package var bytes: [UInt8] { nonce + commitment + extensionMessage }
    }

    /// Signing round 2, 53,540 bytes: `R (33) || salt (32) || pk (33) || ψ (32) || Γ^u (33) || Γ^v (33)
    /// || multiplication reply`.
    package struct SigningRound2 {
        package let point: Point
        package let salt: [UInt8]
        package let publicShare: Point
        package let psi: Scalar
        package let gammaU: Point
        package let gammaV: Point
        package let reply: [UInt8]

        /// Reads the message `sender` sent.
        /// - Throws: `invalidEncoding` when it does not parse.
        package init(_ bytes: [UInt8], from sender: Int) throws {
            var wire = ECDSAWire(bytes, what: "round 2 from party \(sender)")
            point = try wire.point()
            salt = try wire.take(32)
            publicShare = try wire.point()
            psi = try wire.scalar()
            gammaU = try wire.point()
            gammaV = try wire.point()
            reply = try wire.take(RandomVectorOLE.replyCount)
            try wire.finish()
        }

        package var bytes: [UInt8] {
            point.rawRepresentation + salt + publicShare.rawRepresentation + psi.rawRepresentation.revealedBytes()
                + gammaU.rawRepresentation + gammaV.rawRepresentation + reply
        }
    }

    /// Signing round 3, 64 bytes: `u (32) || w (32)`.
    package struct SigningRound3 {
        package let u: Scalar
        package let w: Scalar

        /// Reads the broadcast `sender` sent.
        /// - Throws: `invalidEncoding` when it does not parse.
        package init(_ bytes: [UInt8], from sender: Int) throws {
            var wire = ECDSAWire(bytes, what: "round 3 from party \(sender)")
            u = try wire.scalar()
            w = try wire.scalar()
            try wire.finish()
        }

        package var bytes: [UInt8] { u.rawRepresentation.revealedBytes() + w.rawRepresentation.revealedBytes() }
    }
}
