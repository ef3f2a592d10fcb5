#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// FROST signing for BIP-340 signatures on secp256k1 as the BIP draft "FROST Signing Protocol for
/// BIP340 Signatures" (BIP 445, FROST3) specifies it (docs/formats.md §11, mode `bip340`).
///
/// The API speaks party indices (1…255, docs/formats.md §1); the draft's zero-based identifier of party
/// i is i − 1, and that is what its hashes bind. Errors name the party index to blame.
public enum FrostBIP340 {
    static let curve = Curve.secp256k1

    /// The draft's identifier of a party, serialised as its 4-byte big-endian integer.
    static func serializedIdentifier(_ index: Int) -> [UInt8] {
        let id = UInt32(index - 1)
        return [UInt8(id >> 24), UInt8((id >> 16) & 0xFF), UInt8((id >> 8) & 0xFF), UInt8(id & 0xFF)]
    }

    // MARK: Signers context

    /// The draft's Signers Context, validated as ValidateSignersCtx does: the signer set, their
    /// public shares and the threshold public key they must reproduce.
    public struct SignersContext: Sendable {
        /// t.
        public let threshold: Int
        /// n.
        public let parties: Int
        /// The signing parties' indices, in the order given.
        public let signers: [Int]
        /// Party index → public share X_i.
        public let publicShares: [Int: Point]
        /// The (untweaked) threshold public key Y.
        public let groupKey: Point

        /// ValidateSignersCtx over encoded inputs, blaming the party whose public share is bad.
        /// - Parameters:
        ///   - threshold: t, 1…n.
        ///   - parties: n, 1…255.
        ///   - signers: The signers' party indices (u of them, t ≤ u ≤ n), each 1…n, distinct.
        ///   - publicShares: Each signer's 33-byte compressed public share, in the order of `signers`.
        ///   - groupKey: The 33-byte compressed threshold public key.
        /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for t, n, u, an index out of range or
        ///   a duplicate; ``ShareCryptoError/Code/invalidPoint`` naming the party whose public share does
        ///   not parse (none for the group key); ``ShareCryptoError/Code/publicKeyMismatch`` when the
        ///   shares do not interpolate to the group key.
        public init(threshold: Int, parties: Int, signers: [Int], publicShares: [[UInt8]], groupKey: [UInt8]) throws {
            guard (1...255).contains(parties), (1...parties).contains(threshold) else {
                throw ShareCryptoError(.invalidParameters, "need 1 ≤ t ≤ n ≤ 255, got t = \(threshold), n = \(parties)")
            }
            guard (threshold...parties).contains(signers.count) else {
                throw ShareCryptoError(
                    .invalidParameters,
                    "the number of signers must be between t = \(threshold) and n = \(parties), got \(signers.count)")
            }
            guard publicShares.count == signers.count else {
                throw ShareCryptoError(
                    .invalidParameters,
                    "one public share per signer: \(signers.count) signers, \(publicShares.count) shares")
            }
            var shares: [Int: Point] = [:]
            for (index, encoded) in zip(signers, publicShares) {
                guard (1...parties).contains(index) else {
                    throw ShareCryptoError(.invalidParameters, "signer index \(index) is outside 1…\(parties)")
                }
                do {
                    shares[index] = try Point(rawRepresentation: encoded, curve: curve)
                } catch let error as ShareCryptoError {
                    throw ShareCryptoError(error.code, "party \(index)'s public share: \(error.reason)", party: index)
                }
            }
            guard shares.count == signers.count else {
                throw ShareCryptoError(.invalidParameters, "the signer set has a duplicate index")
            }
            let key = try Point(rawRepresentation: groupKey, curve: curve)
            // DeriveThreshPubkey: Σ λ_i·X_i must be Y.
            let derived = try Point.sumAllowingIdentity(
                signers.map { index in
                    try shares[index]!.multipliedAllowingIdentity(
                        by: Shamir.lagrangeCoefficientAtZero(index: index, indices: signers, curve: curve))
                })
            guard derived == key else {
                throw ShareCryptoError(
                    .publicKeyMismatch, "the signers' public shares do not interpolate to the threshold public key")
            }
            self.threshold = threshold
            self.parties = parties
            self.signers = signers
            self.publicShares = shares
            self.groupKey = key
        }

        /// ValidateSignersCtx over points.
        /// - Parameters:
        ///   - threshold: t.
        ///   - parties: n.
        ///   - publicShares: Signer party index → X_i.
        ///   - groupKey: Y.
        /// - Throws: As the encoded initialiser.
        public init(threshold: Int, parties: Int, publicShares: [Int: Point], groupKey: Point) throws {
            let signers = publicShares.keys.sorted()
            try self.init(
                threshold: threshold, parties: parties, signers: signers,
                publicShares: signers.map { publicShares[$0]!.rawRepresentation }, groupKey: groupKey.rawRepresentation)
        }

        func lagrangeCoefficient(of index: Int) throws -> Scalar {
            try Shamir.lagrangeCoefficientAtZero(index: index, indices: signers, curve: curve)
        }
    }

    // MARK: Tweaks

    /// One tweak of the threshold public key: plain (BIP32 derivation) or x-only (BIP341 Taproot).
    public struct Tweak: Sendable {
        /// The tweak scalar t.
        public let value: Scalar
        /// Whether it is applied to the even-y version of the key.
        public let isXOnly: Bool

        /// Parses a tweak.
        /// - Parameters:
        ///   - rawRepresentation: 32 bytes, big-endian, below the group order.
        ///   - isXOnly: X-only (true) or plain (false).
        /// - Throws: ``ShareCryptoError/Code/invalidLength``, ``ShareCryptoError/Code/invalidScalar``.
        public init(rawRepresentation: some ContiguousBytes, isXOnly: Bool) throws {
            value = try Scalar(rawRepresentation: rawRepresentation, curve: curve)
            self.isXOnly = isXOnly
        }

        /// A tweak from a scalar another standard computed (BIP-32's `I_L`, BIP-341's TapTweak).
        /// - Parameters:
        ///   - value: A secp256k1 scalar.
        ///   - isXOnly: X-only (true) or plain (false).
        public init(_ value: Scalar, isXOnly: Bool) {
            precondition(value.curve == curve, "a secp256k1 tweak")
            self.value = value
            self.isXOnly = isXOnly
        }
    }

    /// The draft's Tweak Context (Q, gacc, tacc).
    struct TweakContext {
        var key: Point
        var gacc: Scalar
        var tacc: Scalar

        init(groupKey: Point) {
            key = groupKey
            gacc = Scalar(1, curve: curve)
            tacc = Scalar(0, curve: curve)
        }

        /// ApplyTweak: Q' = g·Q + t·G, gacc' = g·gacc, tacc' = t + g·tacc.
        mutating func apply(_ tweak: Tweak) throws {
            let negate = tweak.isXOnly && !key.hasEvenY
            let base = negate ? key.negated : key
            guard let tweaked = Point.sumAllowingIdentity([base, Point.generatorTimesAllowingIdentity(tweak.value)])
            else {
                throw ShareCryptoError(.invalidPoint, "the tweak takes the threshold public key to the identity")
            }
            key = tweaked
            gacc = negate ? gacc.negated : gacc
            tacc = tweak.value + (negate ? tacc.negated : tacc)
        }
    }

    // MARK: Nonces

    /// The draft's aggregate nonce (R1, R2); either half may be the identity (`nil`).
    public struct AggregateNonce: Sendable, Equatable {
        /// R1 = Σ R*_{i,1}, `nil` for the identity.
        public let first: Point?
        /// R2 = Σ R*_{i,2}, `nil` for the identity.
        public let second: Point?

        /// `cbytes_ext(R1) || cbytes_ext(R2)`: 66 bytes, an identity half as 33 zero bytes.
        public var rawRepresentation: [UInt8] { AggregateNonce.encode(first) + AggregateNonce.encode(second) }

        /// Parses a coordinator's aggregate nonce.
        /// - Parameter rawRepresentation: 66 bytes.
        /// - Throws: ``ShareCryptoError/Code/invalidPoint`` (no party: the coordinator is to blame).
        public init(rawRepresentation: some ContiguousBytes) throws {
            let bytes = rawRepresentation.withUnsafeBytes { Array($0) }
            guard bytes.count == 66 else {
                throw ShareCryptoError(.invalidPoint, "an aggregate nonce is 66 bytes, got \(bytes.count)")
            }
            first = try AggregateNonce.decode(Array(bytes[0..<33]))
            second = try AggregateNonce.decode(Array(bytes[33...]))
        }

        /// NonceAgg over parsed commitments.
        /// - Parameter commitments: Every signer's commitment.
        public init(aggregating commitments: [FrostNonceCommitment]) {
            first = Point.sumAllowingIdentity(commitments.map(\.hiding))
            second = Point.sumAllowingIdentity(commitments.map(\.binding))
        }

        private static func encode(_ point: Point?) -> [UInt8] {
            point?.rawRepresentation ?? [UInt8](repeating: 0, count: 33)
        }

        private static func decode(_ bytes: [UInt8]) throws -> Point? {
            if bytes.allSatisfy({ $0 == 0 }) { return nil }
            do {
                return try Point(rawRepresentation: bytes, curve: curve)
            } catch let error as ShareCryptoError {
                throw ShareCryptoError(error.code, "aggregate nonce: \(error.reason)")
            }
        }
    }

    /// NonceAgg over encoded pubnonces, blaming the first signer whose pubnonce does not parse
    /// (first halves of all signers, then second halves, as the draft orders it).
    /// - Parameters:
    ///   - pubnonces: Signer party index → 66-byte pubnonce.
    ///   - order: The signers in the order to check them.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` naming the party.
    public static func aggregateNonces(_ pubnonces: [Int: [UInt8]], order: [Int]) throws -> AggregateNonce {
        try AggregateNonce(aggregating: parseNonceCommitments(pubnonces, order: order).map { $0.1 })
    }

    static func parseNonceCommitments(_ pubnonces: [Int: [UInt8]], order: [Int]) throws -> [(Int, FrostNonceCommitment)]
    {
        let encoded = try order.map { index -> (Int, [UInt8]) in
            guard let bytes = pubnonces[index] else {
                throw ShareCryptoError(.invalidParameters, "no pubnonce from party \(index)", party: index)
            }
            guard bytes.count == 66 else {
                throw ShareCryptoError(.invalidPoint, "party \(index)'s pubnonce is not 66 bytes", party: index)
            }
            return (index, bytes)
        }
        for half in [0..<33, 33..<66] {
            for (index, bytes) in encoded {
                do {
                    _ = try Point(rawRepresentation: bytes[half], curve: curve)
                } catch let error as ShareCryptoError {
                    throw ShareCryptoError(error.code, "party \(index)'s pubnonce: \(error.reason)", party: index)
                }
            }
        }
        return try encoded.map { index, bytes in
            (index, try FrostNonceCommitment(rawRepresentation: bytes, curve: curve, party: index))
        }
    }

    /// NonceGen: a fresh nonce from 32 random bytes, hardened with whichever optional session inputs
    /// are known (defence in depth if the random source repeats).
    /// - Parameters:
    ///   - share: The signer's secret share (recommended).
    ///   - publicShare: The signer's public share.
    ///   - groupKey: The (tweaked) threshold public key; its x-only form is bound.
    ///   - message: The message, if known.
    ///   - extraInput: Any further session data (at most 2^32 − 1 bytes).
    ///   - random: The random source (the system CSPRNG in production; vectors fix rand').
    /// - Returns: A single-use nonce; its ``FrostSigningNonce/commitment`` is the pubnonce.
    public static func generateNonce(
        share: Scalar?, publicShare: Point?, groupKey: Point?, message: [UInt8]?, extraInput: [UInt8]?,
        using random: some RandomSource = SystemRandom()
    ) -> FrostSigningNonce {
        precondition(share.map { $0.curve == curve } ?? true, "a secp256k1 share")
        let randPrime = random.secureBytes(count: 32)
        let rand: SecureBytes
        if let share {
            let mask = TaggedHash.hash(tag: "BIP0445/aux", [.secret(randPrime)])
            rand = SecureBytes(count: 32) { out in
                share.rawRepresentation.withUnsafeBytes { s in
                    mask.withUnsafeBytes { m in for j in 0..<32 { out[j] = s[j] ^ m[j] } }
                }
            }
        } else {
            rand = randPrime
        }
        let pubshare = publicShare?.rawRepresentation ?? []
        let thresholdKey = groupKey?.xOnlyRepresentation ?? []
        let messagePrefixed: [UInt8] = message.map { [1] + bigEndian(UInt64($0.count), count: 8) + $0 } ?? [0]
        let extra = extraInput ?? []
        let context: [UInt8] =
            [UInt8(pubshare.count)] + pubshare + [UInt8(thresholdKey.count)] + thresholdKey + messagePrefixed
            + bigEndian(UInt64(extra.count), count: 4) + extra
        let scalars = (0..<2).map { i in
            Scalar(
                reducingBigEndian: TaggedHash.hash(
                    tag: "BIP0445/nonce", [.secret(rand), .bytes(context + [UInt8(i)])]), curve: curve)
        }
        // A zero scalar has probability ~2^-256; the draft treats it as unreachable.
        guard let nonce = try? FrostSigningNonce(hiding: scalars[0], binding: scalars[1]) else {
            return generateNonce(
                share: share, publicShare: publicShare, groupKey: groupKey, message: message, extraInput: extraInput,
                using: random)
        }
        return nonce
    }

    // MARK: Session

    /// The draft's Session Context with the values GetSessionValues derives from it.
    public struct Session: Sendable {
        /// The signers.
        public let signersContext: SignersContext
        /// The aggregate nonce.
        public let aggregateNonce: AggregateNonce
        /// The message.
        public let message: [UInt8]
        /// Q: the threshold public key after the tweaks.
        public let tweakedKey: Point
        /// b, the nonce coefficient.
        public let nonceCoefficient: Scalar
        /// R, the final nonce (G when R1 + b·R2 is the identity).
        public let finalNonce: Point
        /// e, the BIP-340 challenge.
        public let challenge: Scalar
        let gacc: Scalar
        let tacc: Scalar

        /// GetSessionValues.
        /// - Parameters:
        ///   - signersContext: The validated signers.
        ///   - aggregateNonce: The aggregate nonce.
        ///   - message: The message, any length.
        ///   - tweaks: Tweaks, applied in order.
        /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when a tweak reaches the identity.
        public init(
            signersContext: SignersContext, aggregateNonce: AggregateNonce, message: [UInt8], tweaks: [Tweak] = []
        ) throws {
            var tweak = TweakContext(groupKey: signersContext.groupKey)
            for t in tweaks { try tweak.apply(t) }
            let identifiers = signersContext.signers.sorted().flatMap(serializedIdentifier)
            let b = Scalar(
                reducingBigEndian: TaggedHash.hash(
                    tag: "BIP0445/noncecoef",
                    [.bytes(identifiers + aggregateNonce.rawRepresentation + tweak.key.xOnlyRepresentation + message)]),
                curve: curve)
            let nonce =
                Point.sumAllowingIdentity([
                    aggregateNonce.first, aggregateNonce.second?.multipliedAllowingIdentity(by: b),
                ])
                ?? Point.generator(on: curve)
            self.signersContext = signersContext
            self.aggregateNonce = aggregateNonce
            self.message = message
            tweakedKey = tweak.key
            gacc = tweak.gacc
            tacc = tweak.tacc
            nonceCoefficient = b
            finalNonce = nonce
            challenge = FrostBIP340.challenge(nonce: nonce, key: tweak.key, message: message)
        }

        /// g·gacc: the sign the signers' shares take so the result verifies under Q's x-only key.
        var shareSign: Scalar {
            tweakedKey.hasEvenY ? gacc : gacc.negated
        }
    }

    /// BIP-340's challenge `int(hash_BIP0340/challenge(bytes(R) || bytes(Q) || m)) mod n`.
    static func challenge(nonce: Point, key: Point, message: [UInt8]) -> Scalar {
        Scalar(
            reducingBigEndian: TaggedHash.hash(
                tag: "BIP0340/challenge", [.bytes(nonce.xOnlyRepresentation + key.xOnlyRepresentation + message)]),
            curve: curve)
    }

    // MARK: Signing

    /// Sign: `s = k1 + b·k2 + e·λ·d` with the nonce and the share negated as R's and Q's parity
    /// require. Consumes the nonce once the inputs have passed their checks; the partial signature
    /// is verified before it is returned.
    /// - Parameters:
    ///   - nonce: This signer's nonce from round one.
    ///   - share: The signer's secret share d'.
    ///   - index: The signer's party index.
    ///   - session: The session.
    /// - Returns: The partial signature.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` when `index` is not a signer;
    ///   ``ShareCryptoError/Code/invalidScalar`` for a zero share; ``ShareCryptoError/Code/invalidShare``
    ///   when `share·G` is not the signer's public share; ``ShareCryptoError/Code/nonceReused``.
    public static func sign(nonce: FrostSigningNonce, share: Scalar, index: Int, session: Session) throws -> Scalar {
        precondition(share.curve == curve && nonce.curve == curve, "secp256k1 share and nonce")
        let signers = session.signersContext
        guard let publicShare = signers.publicShares[index] else {
            throw ShareCryptoError(.invalidParameters, "party \(index) is not in the signer set", party: index)
        }
        guard !share.isZero else {
            throw ShareCryptoError(.invalidScalar, "a secret share must not be zero", party: index)
        }
        guard try Point(generatorTimes: share) == publicShare else {
            throw ShareCryptoError(
                .invalidShare, "this share is not party \(index)'s: its public share differs", party: index)
        }
        let lambda = try signers.lagrangeCoefficient(of: index)
        let (k1, k2) = try nonce.take()
        let evenNonce = session.finalNonce.hasEvenY
        let s =
            (evenNonce ? k1 : k1.negated) + session.nonceCoefficient * (evenNonce ? k2 : k2.negated)
            + session.challenge * lambda * session.shareSign * share
        guard verifyPartialSignature(s, index: index, commitment: nonce.commitment, session: session) else {
            throw ShareCryptoError(
                .backendFailure, "the partial signature failed its own check; it was not released", party: index)
        }
        return s
    }

    /// PartialSigVerifyInternal: `s·G == ±(R*,1 + b·R*,2) + e·λ·(g·gacc)·X_i`.
    /// - Parameters:
    ///   - partialSignature: s.
    ///   - index: The signer's party index.
    ///   - commitment: The signer's pubnonce.
    ///   - session: The session.
    /// - Returns: Whether it verifies (`false` for a party outside the signer set).
    public static func verifyPartialSignature(
        _ partialSignature: Scalar, index: Int, commitment: FrostNonceCommitment, session: Session
    ) -> Bool {
        guard let publicShare = session.signersContext.publicShares[index],
            let lambda = try? session.signersContext.lagrangeCoefficient(of: index)
        else { return false }
        let effective = Point.sumAllowingIdentity([
            commitment.hiding, commitment.binding.multipliedAllowingIdentity(by: session.nonceCoefficient),
        ])
        let nonce = session.finalNonce.hasEvenY ? effective : effective?.negated
        let left = Point.generatorTimesAllowingIdentity(partialSignature)
        let right = Point.sumAllowingIdentity([
            nonce, publicShare.multipliedAllowingIdentity(by: session.challenge * lambda * session.shareSign),
        ])
        return left == right
    }

    /// PartialSigVerify from encoded pubnonces: aggregates them (blaming a bad one), builds the
    /// session and checks one signer's partial signature.
    /// - Parameters:
    ///   - partialSignature: s.
    ///   - pubnonces: Party index → 66-byte pubnonce, for every signer.
    ///   - signersContext: The signers.
    ///   - tweaks: Tweaks.
    ///   - message: The message.
    ///   - index: The party whose partial signature this is.
    /// - Returns: Whether it verifies.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` naming a party whose pubnonce does not parse;
    ///   ``ShareCryptoError/Code/invalidPoint`` for a tweak that reaches the identity.
    public static func verifyPartialSignature(
        _ partialSignature: Scalar, pubnonces: [Int: [UInt8]], signersContext: SignersContext, tweaks: [Tweak],
        message: [UInt8], index: Int
    ) throws -> Bool {
        let commitments = Dictionary(
            uniqueKeysWithValues: try parseNonceCommitments(pubnonces, order: signersContext.signers))
        let session = try Session(
            signersContext: signersContext,
            aggregateNonce: AggregateNonce(aggregating: signersContext.signers.map { commitments[$0]! }),
            message: message, tweaks: tweaks)
        guard let commitment = commitments[index] else { return false }
        return verifyPartialSignature(partialSignature, index: index, commitment: commitment, session: session)
    }

    /// PartialSigAgg: `sig = bytes(R) || bytes(Σ s_i + e·g·tacc)`.
    /// - Parameters:
    ///   - partialSignatures: Party index → s_i, exactly the signers.
    ///   - session: The session.
    /// - Returns: The 64-byte BIP-340 signature under the tweaked key's x-only form.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` when the partial signatures are not exactly the signers'.
    public static func aggregate(partialSignatures: [Int: Scalar], session: Session) throws -> [UInt8] {
        guard Set(partialSignatures.keys) == Set(session.signersContext.signers),
            partialSignatures.count == session.signersContext.signers.count
        else {
            throw ShareCryptoError(.invalidParameters, "partial signatures must come from exactly the signers")
        }
        var s = session.challenge * (session.tweakedKey.hasEvenY ? session.tacc : session.tacc.negated)
        for index in session.signersContext.signers { s = s + partialSignatures[index]! }
        return session.finalNonce.xOnlyRepresentation + s.rawRepresentation.revealedBytes()
    }

    /// Verifies every partial signature (naming the first bad signer, in signer order), then aggregates.
    /// - Parameters:
    ///   - partialSignatures: Party index → s_i, exactly the signers.
    ///   - commitments: Party index → that signer's pubnonce.
    ///   - session: The session.
    /// - Returns: The 64-byte BIP-340 signature.
    /// - Throws: ``ShareCryptoError/Code/invalidSignatureShare`` naming the party;
    ///   ``ShareCryptoError/Code/invalidParameters`` when the inputs do not cover the signers.
    public static func aggregateVerified(
        partialSignatures: [Int: Scalar], commitments: [Int: FrostNonceCommitment], session: Session
    ) throws -> [UInt8] {
        for index in session.signersContext.signers {
            guard let partial = partialSignatures[index], let commitment = commitments[index] else {
                throw ShareCryptoError(
                    .invalidParameters, "no partial signature or commitment from party \(index)", party: index)
            }
            guard verifyPartialSignature(partial, index: index, commitment: commitment, session: session) else {
                throw ShareCryptoError(
                    .invalidSignatureShare, "party \(index)'s partial signature does not verify", party: index)
            }
        }
        return try aggregate(partialSignatures: partialSignatures, session: session)
    }

    /// DeterministicSign: the stateless signer that generates its nonce last, from its share, the
    /// session and the other signers' aggregate nonce, and signs at once. Only the last signer of
    /// a session (or a sole signer) may use it.
    /// - Parameters:
    ///   - share: The signer's secret share.
    ///   - index: The signer's party index.
    ///   - aggregateOtherNonce: NonceAgg of every other signer's pubnonce (66 bytes), or `nil` for a sole signer.
    ///   - signersContext: The signers.
    ///   - tweaks: Tweaks.
    ///   - message: The message.
    ///   - auxiliaryRandomness: 32 optional random bytes mixed into the share before hashing.
    /// - Returns: This signer's pubnonce and partial signature.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` (no party: the coordinator's) for an
    ///   aggregate other nonce whose halves are not points; otherwise as ``sign(nonce:share:index:session:)``.
    public static func deterministicSign(
        share: Scalar, index: Int, aggregateOtherNonce: [UInt8]?, signersContext: SignersContext, tweaks: [Tweak],
        message: [UInt8], auxiliaryRandomness: [UInt8]?
    ) throws -> (commitment: FrostNonceCommitment, partialSignature: Scalar) {
        guard Shamir.indexRange.contains(index) else {
            throw ShareCryptoError(.invalidParameters, "party index \(index) is outside 1…255", party: index)
        }
        let masked: SecureBytes
        if let auxiliaryRandomness {
            let mask = TaggedHash.hash(tag: "BIP0445/aux", [.bytes(auxiliaryRandomness)])
            masked = SecureBytes(count: 32) { out in
                share.rawRepresentation.withUnsafeBytes { s in
                    mask.withUnsafeBytes { m in for j in 0..<32 { out[j] = s[j] ^ m[j] } }
                }
            }
        } else {
            masked = share.rawRepresentation
        }
        var tweak = TweakContext(groupKey: signersContext.groupKey)
        for t in tweaks { try tweak.apply(t) }
        let other: FrostNonceCommitment?
        do {
            other = try aggregateOtherNonce.map { try FrostNonceCommitment(rawRepresentation: $0, curve: curve) }
        } catch let error as ShareCryptoError {
            throw ShareCryptoError(error.code, "aggregate of the other signers' nonces: \(error.reason)")
        }
        let context: [UInt8] =
            serializedIdentifier(index) + bigEndian(UInt64(signersContext.signers.count), count: 4)
            + signersContext.signers.sorted().flatMap(serializedIdentifier) + (aggregateOtherNonce ?? [])
            + tweak.key.xOnlyRepresentation + bigEndian(UInt64(message.count), count: 8) + message
        let scalars = (0..<2).map { i in
            Scalar(
                reducingBigEndian: TaggedHash.hash(
                    tag: "BIP0445/deterministic/nonce", [.secret(masked), .bytes(context + [UInt8(i)])]),
                curve: curve)
        }
        let nonce = try FrostSigningNonce(hiding: scalars[0], binding: scalars[1])
        let aggregate = AggregateNonce(aggregating: [nonce.commitment] + (other.map { [$0] } ?? []))
        let session = try Session(
            signersContext: signersContext, aggregateNonce: aggregate, message: message, tweaks: tweaks)
        return (nonce.commitment, try sign(nonce: nonce, share: share, index: index, session: session))
    }

    /// BIP-340 verification by libsecp256k1 (`secp256k1_schnorrsig_verify`), independent of this module's FROST code.
    /// - Parameters:
    ///   - signature: 64 bytes.
    ///   - message: The message, any length.
    ///   - xOnlyKey: The 32-byte x-only public key (the tweaked key's, when tweaked).
    /// - Returns: Whether the signature is valid.
    public static func verify(signature: [UInt8], message: [UInt8], xOnlyKey: [UInt8]) -> Bool {
        Point.schnorrVerify(signature: signature, message: message, xOnlyKey: xOnlyKey)
    }

    private static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * (count - 1 - $0))) }
    }
}
