public import ShareCrypto

/// The kind of a share set (docs/formats.md §2).
public enum SetKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// The shares that sign.
    case signing = 1
    /// The shares that recover.
    case backup = 2

    /// The JSON name.
    public var name: String { self == .signing ? "signing" : "backup" }

    /// Parses a JSON name.
    public init?(name: String) {
        switch name {
        case "signing": self = .signing
        case "backup": self = .backup
        default: return nil
        }
    }

    public var description: String { name }
}

/// A share set's 16-byte identifier.
public struct SetID: Sendable, Hashable, CustomStringConvertible {
    /// Size in bytes.
    public static let count = 16
    /// The bytes.
    public let bytes: [UInt8]

    /// Wraps 16 bytes.
    /// - Throws: ``ShareRecoveryError/Code/malformedRecord`` for another size.
    public init(bytes: [UInt8]) throws(ShareRecoveryError) {
        guard bytes.count == Self.count else {
            throw ShareRecoveryError(.malformedRecord, "a setId is 16 bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A fresh random identifier.
    public static func random(using random: some RandomSource = SystemRandom()) -> SetID {
        // 16 bytes by construction.
        try! SetID(bytes: random.bytes(count: count))
    }

    /// Lowercase hex.
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
}

/// One party's share of a wallet key, with the public data of its set (docs/formats.md §4).
///
/// A value of this type has passed every check of §4: ranges, a valid point for every commitment,
/// and, when the secret is present, `x_i·G == X_i`. A record without a secret is a public
/// description, which is all that logs and status output ever show.
public struct ShareRecord: Sendable, Equatable, CustomStringConvertible {
    /// The wallet this share belongs to (1…255 UTF-8 bytes).
    public let walletId: String
    /// The curve.
    public let curve: Curve
    /// Signing or backup.
    public let kind: SetKind
    /// t, 2 ≤ t ≤ n.
    public let threshold: Int
    /// n, 2 ≤ n ≤ 255.
    public let parties: Int
    /// i, 1 ≤ i ≤ n.
    public let partyIndex: Int
    /// The set's epoch.
    public let generation: UInt32
    /// The set's identifier.
    public let setId: SetID
    /// x_i, or `nil` in a public description.
    public let secret: Scalar?
    /// A_0 … A_{t−1}.
    public let commitments: [Point]
    /// X_i when this record has computed it (the §4 check of a record with a secret), so a later
    /// resharing reuses it instead of summing the commitments again. Public, derived, never compared.
    private var knownPublicShare: Point?

    /// The wallet public key Y = A_0.
    public var publicKey: Point { commitments[0] }

    /// Largest walletId in UTF-8 bytes.
    public static let maximumWalletIdCount = 255

    /// Creates a record and runs every §4 check.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for out-of-range fields,
    ///   ``ShareRecoveryError/Code/invalidPoint`` for commitments on another curve,
    ///   ``ShareRecoveryError/Code/invalidShare`` when x_i·G ≠ X_i.
    public init(
        walletId: String, curve: Curve, kind: SetKind, threshold: Int, parties: Int, partyIndex: Int,
        generation: UInt32, setId: SetID, secret: Scalar?, commitments: [Point]
    ) throws(ShareRecoveryError) {
        try self.init(
            walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties,
            partyIndex: partyIndex,
            generation: generation, setId: setId, secret: secret, commitments: commitments, steppingFrom: nil)
    }

    /// As the public initializer; `neighbour`, a record of the same commitments that knows its
    /// public share, lets X_i be reached from it (``publicShare(steppingFrom:)``). Every check runs.
    init(
        walletId: String, curve: Curve, kind: SetKind, threshold: Int, parties: Int, partyIndex: Int,
        generation: UInt32, setId: SetID, secret: Scalar?, commitments: [Point], steppingFrom neighbour: ShareRecord?
    ) throws(ShareRecoveryError) {
        try ShareRecord.checkRanges(
            walletIdCount: walletId.utf8.count, threshold: threshold, parties: parties, partyIndex: partyIndex)
        guard commitments.count == threshold else {
            throw ShareRecoveryError(.invalidParameters, "\(commitments.count) commitments for threshold \(threshold)")
        }
        guard commitments.allSatisfy({ $0.curve == curve }), secret.map({ $0.curve == curve }) ?? true else {
            throw ShareRecoveryError(.invalidPoint, "a commitment or the secret is on another curve")
        }
        self.walletId = walletId
        self.curve = curve
        self.kind = kind
        self.threshold = threshold
        self.parties = parties
        self.partyIndex = partyIndex
        self.generation = generation
        self.setId = setId
        self.secret = secret
        self.commitments = commitments
        if let secret {
            guard !secret.isZero else { throw ShareRecoveryError(.invalidScalar, "the secret share is zero") }
            let expected = try publicShare(steppingFrom: neighbour)
            let actual = try mappingCryptoErrors { try Point(generatorTimes: secret) }
            guard actual == expected else {
                throw ShareRecoveryError(.invalidShare, "x_i·G ≠ X_i for party \(partyIndex)")
            }
            knownPublicShare = expected
        }
    }

    /// A record whose x_i·G == X_i check the caller has just made (resharing receivers); ranges and
    /// shapes are still checked.
    init(
        verified: Void, walletId: String, curve: Curve, kind: SetKind, threshold: Int, parties: Int, partyIndex: Int,
        generation: UInt32, setId: SetID, secret: Scalar, commitments: [Point]
    ) throws(ShareRecoveryError) {
        try self.init(
            walletId: walletId, curve: curve, kind: kind, threshold: threshold, parties: parties,
            partyIndex: partyIndex,
            generation: generation, setId: setId, secret: nil, commitments: commitments)
        guard !secret.isZero, secret.curve == curve else {
            throw ShareRecoveryError(.invalidScalar, "the secret share is zero or on another curve")
        }
        self = ShareRecord(unchecked: self, secret: secret)
    }

    static func checkRanges(walletIdCount: Int, threshold: Int, parties: Int, partyIndex: Int)
        throws(ShareRecoveryError)
    {
        guard (1...maximumWalletIdCount).contains(walletIdCount) else {
            throw ShareRecoveryError(.invalidParameters, "walletId must be 1…255 bytes, got \(walletIdCount)")
        }
        guard (2...255).contains(parties) else {
            throw ShareRecoveryError(.invalidParameters, "parties must be 2…255, got \(parties)")
        }
        guard threshold >= 2, threshold <= parties else {
            throw ShareRecoveryError(
                .invalidParameters,
                "threshold must be 2…\(parties) (the number of parties), got \(threshold): any t of the n parties act together, so t cannot exceed n"
            )
        }
        guard (1...parties).contains(partyIndex) else {
            throw ShareRecoveryError(.invalidParameters, "party index must be 1…\(parties), got \(partyIndex)")
        }
    }

    /// X_i = Σ i^k·A_k for this record's index.
    public var publicShare: Point {
        get throws(ShareRecoveryError) {
            if let knownPublicShare { return knownPublicShare }
            return try mappingCryptoErrors { try Shamir.publicShare(index: partyIndex, commitments: commitments) }
        }
    }

    /// X_i, reached from a record u of the same commitments that knows X_u when t = 2:
    /// X_i = X_u + (i − u)·A_1, one addition for neighbours (the custodian's share beside the user's),
    /// where Horner's rule costs a doubling more. Exactly X_i, identity included (then `invalidPoint`).
    func publicShare(steppingFrom neighbour: ShareRecord?) throws(ShareRecoveryError) -> Point {
        guard let neighbour, let known = neighbour.knownPublicShare, threshold == 2,
            neighbour.commitments == commitments,
            (neighbour.partyIndex - partyIndex).magnitude < LagrangeFraction.smallLimit
        else { return try publicShare }
        if neighbour.partyIndex == partyIndex { return known }
        return try mappingCryptoErrors {
            try known + (try LagrangeFraction.multiple(commitments[1], by: partyIndex - neighbour.partyIndex))
        }
    }

    /// The same record without its secret.
    public var publicDescription: ShareRecord {
        ShareRecord(unchecked: self, secret: nil)
    }

    private init(unchecked record: ShareRecord, secret: Scalar?) {
        walletId = record.walletId
        curve = record.curve
        kind = record.kind
        threshold = record.threshold
        parties = record.parties
        partyIndex = record.partyIndex
        generation = record.generation
        setId = record.setId
        self.secret = secret
        commitments = record.commitments
        knownPublicShare = record.knownPublicShare
    }

    /// Whether two records describe the same set (everything but index and secret).
    public func isSameSet(as other: ShareRecord) -> Bool {
        walletId == other.walletId && curve == other.curve && kind == other.kind && threshold == other.threshold
            && parties == other.parties && generation == other.generation && setId == other.setId
            && commitments == other.commitments
    }

    /// How `other` is of another set than this record, in words, naming the widest difference first
    /// (two curves, then two wallets, then two sets or generations of one wallet), so a mix-up of
    /// files is reported as what it is; nil when both are of one set.
    public func setMismatch(with other: ShareRecord) -> String? {
        if isSameSet(as: other) { return nil }
        let (mine, theirs) = ("party \(partyIndex)'s share", "party \(other.partyIndex)'s")
        if curve != other.curve {
            return "shares of two curves (two wallets): \(mine) is on \(curve), \(theirs) on \(other.curve)"
        }
        if walletId != other.walletId {
            return "shares of two wallets: \(mine) is of wallet \(walletId), \(theirs) of wallet \(other.walletId)"
        }
        return
            "shares of two sets of wallet \(walletId): \(mine) is of set \(setId) generation \(generation), \(theirs) of set \(other.setId) generation \(other.generation)"
    }

    public static func == (lhs: ShareRecord, rhs: ShareRecord) -> Bool {
        lhs.isSameSet(as: rhs) && lhs.partyIndex == rhs.partyIndex && lhs.secret == rhs.secret
    }

    public var description: String {
        "ShareRecord(wallet: \(walletId), \(curve), \(kind), \(threshold)-of-\(parties), party \(partyIndex), "
            + "generation \(generation), set \(setId)\(secret == nil ? "" : ", secret redacted"))"
    }
}
