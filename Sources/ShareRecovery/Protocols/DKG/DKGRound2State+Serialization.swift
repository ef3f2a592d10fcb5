public import ShareCrypto

/// The round-2 state at rest: a party that waits for other parties' sub-shares across requests (the
/// reference server) seals these bytes and keeps nothing else.
///
/// Layout, version 1: `SRDK`, version (1), curve id, t, n, party index, walletId length and UTF-8,
/// f_j(j) (32), then for each party ascending: sender, t commitments, proof R, proof μ (32).
/// The bytes hold a secret share of the party's polynomial; only a sealed copy may be stored.
extension DKGRound2State {
    private static let magic = Array("SRDK".utf8)
    private static let version: UInt8 = 1

    /// The state's bytes, in a wiped buffer.
    public func serialized() -> SecureBytes {
        var header =
            Self.magic + [
                Self.version, parameters.curve.rawValue, UInt8(parameters.threshold), UInt8(parameters.parties),
            ]
        header += [UInt8(partyIndex), UInt8(parameters.walletId.utf8.count)] + Array(parameters.walletId.utf8)
        var tail: [UInt8] = []
        for message in round1 {
            tail.append(UInt8(message.sender))
            for commitment in message.commitments { tail += commitment.rawRepresentation }
            tail += message.proof.rawRepresentation
        }
        return SecureBytes.concatenating([
            SecureBytes(copying: header), ownSubShare.rawRepresentation, SecureBytes(copying: tail),
        ])
    }

    /// Reads bytes from ``serialized()``.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for bytes of another shape or version;
    ///   the point and scalar codes for values that do not decode.
    public init(serialized bytes: SecureBytes) throws(ShareRecoveryError) {
        // Public parts are read as plain bytes; the secret sub-share only ever as a slice of `bytes`.
        func slice(_ range: Range<Int>) throws(ShareRecoveryError) -> SecureBytes {
            guard range.lowerBound >= 0, range.upperBound <= bytes.count else {
                throw ShareRecoveryError(.malformedRecord, "the DKG state is truncated")
            }
            return try mappingCryptoErrors { try bytes.slice(range) }
        }
        func take(_ count: Int, from reader: inout ByteReader) throws(ShareRecoveryError) -> [UInt8] {
            guard let taken = reader.read(count) else {
                throw ShareRecoveryError(.malformedRecord, "the DKG state is truncated")
            }
            return taken
        }
        var reader = ByteReader(bytes: try slice(0..<10).revealedBytes())
        guard try take(4, from: &reader) == Self.magic, try take(1, from: &reader)[0] == Self.version else {
            throw ShareRecoveryError(.malformedRecord, "not a version-1 DKG round-2 state")
        }
        guard let curve = Curve(rawValue: try take(1, from: &reader)[0]) else {
            throw ShareRecoveryError(.malformedRecord, "unknown curve")
        }
        let threshold = Int(try take(1, from: &reader)[0]), parties = Int(try take(1, from: &reader)[0]),
            partyIndex = Int(try take(1, from: &reader)[0])
        let headerCount = 10 + Int(try take(1, from: &reader)[0])
        guard let walletId = String(validating: try slice(10..<headerCount).revealedBytes(), as: UTF8.self) else {
            throw ShareRecoveryError(.malformedRecord, "walletId is not UTF-8")
        }
        let parameters = try DKGParameters(curve: curve, walletId: walletId, threshold: threshold, parties: parties)
        let secretEnd = headerCount + Curve.scalarCount
        let secret = try slice(headerCount..<secretEnd)
        let ownSubShare = try mappingCryptoErrors { try Scalar(secure: secret, curve: curve) }
        reader = ByteReader(bytes: try slice(secretEnd..<bytes.count).revealedBytes())
        var round1: [DKGRound1Message] = []
        for _ in 0..<parties {
            let sender = Int(try take(1, from: &reader)[0])
            let commitments = try (0..<threshold).map { (_) throws(ShareRecoveryError) in
                let encoded = try take(curve.pointCount, from: &reader)
                return try mappingCryptoErrors { try Point(rawRepresentation: encoded, curve: curve) }
            }
            let proofBytes = try take(curve.pointCount + Curve.scalarCount, from: &reader)
            let proof = try mappingCryptoErrors {
                try DKGProof(rawRepresentation: proofBytes, curve: curve, party: sender)
            }
            round1.append(DKGRound1Message(sender: sender, commitments: commitments, proof: proof))
        }
        guard reader.offset == reader.bytes.count, round1.map(\.sender) == Array(parameters.partyIndices),
            parameters.partyIndices.contains(partyIndex)
        else { throw ShareRecoveryError(.malformedRecord, "the DKG state's parties or length do not match its header") }
        self.init(parameters: parameters, partyIndex: partyIndex, round1: round1, ownSubShare: ownSubShare)
    }
}
