public import ShareCrypto

extension ShareRecord {
    /// `SRSR`.
    public static let magic: [UInt8] = [0x53, 0x52, 0x53, 0x52]
    /// The only version this implementation reads and writes.
    public static let version: UInt8 = 1
    /// Bytes before the walletId.
    package static let fixedHeaderCount = 31

    /// Parses and validates the binary form (docs/formats.md §4). Checks run shape first, then values:
    /// magic and minimum length, version, field ranges, exact length, walletId UTF-8, scalar, points, x_i·G.
    /// - Parameter binary: The record bytes (a secret: pass a `SecureBytes`).
    /// - Throws: ``ShareRecoveryError`` with `malformedRecord`, `unsupportedVersion`, `invalidParameters`,
    ///   `invalidScalar`, `invalidPoint` or `invalidShare`.
    public init(binary: SecureBytes) throws(ShareRecoveryError) {
        try self.init(binary: binary, known: nil, reproducing: nil)
    }

    /// Parses like ``init(binary:)``; commitments whose bytes equal an already validated point of
    /// `known` reuse it instead of being validated again, and X_i may be reached from `known`'s
    /// public share (``publicShare(steppingFrom:)``). Every other check still runs.
    init(binary: SecureBytes, known: ShareRecord) throws(ShareRecoveryError) {
        try self.init(binary: binary, known: known, reproducing: nil)
    }

    /// Parses the binary form of a share this process has just made from checked pieces (a resharing
    /// receiver's output, every sub-share having passed §3 step 3) and proves the bytes say exactly
    /// that: every field must equal `original`'s. x_i·G == X_i then holds because it holds for
    /// `original` (§3 step 5 follows from step 3), so it is not computed a second time.
    /// - Throws: As ``init(binary:)``, and `invalidShare` when the bytes describe another share.
    init(binary: SecureBytes, reproducing original: ShareRecord) throws(ShareRecoveryError) {
        try self.init(binary: binary, known: original, reproducing: original)
    }

    private init(binary: SecureBytes, known: ShareRecord?, reproducing original: ShareRecord?)
        throws(ShareRecoveryError)
    {
        let knownCommitments = known?.commitments ?? []
        let parsed: ShareRecord = try binary.withUnsafeBytes { (bytes) throws(ShareRecoveryError) -> ShareRecord in
            guard bytes.count >= ShareRecord.fixedHeaderCount, Array(bytes[0..<4]) == ShareRecord.magic else {
                throw ShareRecoveryError(
                    .malformedRecord, bytes.count < 4 ? "truncated record" : "bad magic or truncated record")
            }
            guard bytes[4] == ShareRecord.version else {
                throw ShareRecoveryError(.unsupportedVersion, "record version \(bytes[4])")
            }
            guard let curve = Curve(rawValue: bytes[5]) else {
                throw ShareRecoveryError(.invalidParameters, "unknown curve id \(bytes[5])")
            }
            guard let kind = SetKind(rawValue: bytes[6]) else {
                throw ShareRecoveryError(.invalidParameters, "unknown kind \(bytes[6])")
            }
            let threshold = Int(bytes[7]), parties = Int(bytes[8]), index = Int(bytes[9])
            let walletIdCount = Int(bytes[30])
            try ShareRecord.checkRanges(
                walletIdCount: walletIdCount, threshold: threshold, parties: parties, partyIndex: index)
            let expected = ShareRecord.fixedHeaderCount + walletIdCount + 32 + threshold * curve.pointCount
            guard bytes.count == expected else {
                throw ShareRecoveryError(
                    .malformedRecord, bytes.count < expected ? "truncated record" : "trailing bytes after the record")
            }
            let generation = bytes[10..<14].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let setId = try SetID(bytes: Array(bytes[14..<30]))
            let walletIdEnd = ShareRecord.fixedHeaderCount + walletIdCount
            guard let walletId = String(validating: bytes[ShareRecord.fixedHeaderCount..<walletIdEnd], as: UTF8.self)
            else {
                throw ShareRecoveryError(.malformedRecord, "walletId is not UTF-8")
            }
            let secret = try mappingCryptoErrors {
                try Scalar(
                    secret: SecureBytes(
                        copying: UnsafeRawBufferPointer(rebasing: bytes[walletIdEnd..<walletIdEnd + 32])), curve: curve)
            }
            var commitments: [Point] = []
            var offset = walletIdEnd + 32
            for _ in 0..<threshold {
                let encoding = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + curve.pointCount])
                let position = commitments.count
                if position < knownCommitments.count, knownCommitments[position].curve == curve,
                    knownCommitments[position].rawRepresentation.elementsEqual(encoding)
                {
                    commitments.append(knownCommitments[position])
                } else {
                    commitments.append(try mappingCryptoErrors { try Point(rawRepresentation: encoding, curve: curve) })
                }
                offset += curve.pointCount
            }
            guard let original else {
                return try ShareRecord(
                    walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties,
                    partyIndex: index,
                    generation: generation, setId: setId, secret: secret, commitments: commitments, steppingFrom: known)
            }
            guard walletId == original.walletId, curve == original.curve, kind == original.kind,
                threshold == original.threshold, parties == original.parties, index == original.partyIndex,
                generation == original.generation, setId == original.setId, secret == original.secret,
                commitments.map(\.rawRepresentation) == original.commitments.map(\.rawRepresentation)
            else {
                throw ShareRecoveryError(
                    .invalidShare, "the record's binary form does not reproduce the share it was made from")
            }
            return try ShareRecord(
                verified: (), walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties,
                partyIndex: index, generation: generation, setId: setId, secret: secret, commitments: commitments)
        }
        self = parsed
    }

    /// The binary form, which always carries the secret.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a public description (no secret to write).
    public func binary() throws(ShareRecoveryError) -> SecureBytes {
        guard let secret else {
            throw ShareRecoveryError(.invalidParameters, "a public description has no binary form")
        }
        var header = ShareRecord.magic
        header += [
            ShareRecord.version, curve.rawValue, kind.rawValue, UInt8(threshold), UInt8(parties), UInt8(partyIndex),
        ]
        header += [
            UInt8(generation >> 24 & 0xFF), UInt8(generation >> 16 & 0xFF), UInt8(generation >> 8 & 0xFF),
            UInt8(generation & 0xFF),
        ]
        header += setId.bytes
        header.append(UInt8(walletId.utf8.count))
        header += Array(walletId.utf8)
        let tail = commitments.flatMap(\.rawRepresentation)
        return SecureBytes.concatenating([
            SecureBytes(copying: header), secret.rawRepresentation, SecureBytes(copying: tail),
        ])
    }
}
