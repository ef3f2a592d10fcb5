#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A validated curve point other than the identity (docs/formats.md §1). Points are public values.
///
/// Every `Point` that exists passed full validation: on secp256k1 it is a compressed SEC1 point on
/// the curve; on ed25519 it is canonical and of prime order. Operations whose result would be the
/// identity throw ``ShareCryptoError/Code/invalidPoint``.
public struct Point: Sendable, Hashable, CustomStringConvertible {
    /// The curve.
    public let curve: Curve
    /// The canonical encoding: 33-byte compressed SEC1 or 32-byte Edwards.
    public let rawRepresentation: [UInt8]
    /// libsecp256k1's parsed form (64 bytes), kept so later operations skip the square root. Empty on ed25519.
    let parsed: [UInt8]

    init(curve: Curve, rawRepresentation: [UInt8], parsed: [UInt8]) {
        self.curve = curve
        self.rawRepresentation = rawRepresentation
        self.parsed = parsed
    }

    /// Parses and fully validates a point.
    /// - Parameters:
    ///   - rawRepresentation: The encoding.
    ///   - curve: The curve.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` for a wrong size or prefix, an off-curve,
    ///   non-canonical, identity, small-order or mixed-order point.
    public init(rawRepresentation: some ContiguousBytes, curve: Curve) throws {
        let bytes = rawRepresentation.withUnsafeBytes { Array($0) }
        guard bytes.count == curve.pointCount else {
            throw ShareCryptoError(.invalidPoint, "a \(curve) point is \(curve.pointCount) bytes, got \(bytes.count)")
        }
        switch curve {
        case .secp256k1: self = try Point.parseSecp256k1(bytes)
        case .ed25519: self = try Point.parseEd25519(bytes)
        }
    }

    /// `k·G`.
    /// - Parameter k: A non-zero scalar.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for zero.
    public init(generatorTimes k: Scalar) throws {
        guard !k.isZero else { throw ShareCryptoError(.invalidScalar, "k·G with k = 0 is the identity") }
        switch k.curve {
        case .secp256k1: self = try Point.secp256k1Generator(times: k)
        case .ed25519: self = try Point.ed25519Generator(times: k)
        }
    }

    /// The base point G.
    public static func generator(on curve: Curve) -> Point {
        // 1·G cannot fail.
        try! Point(generatorTimes: Scalar(1, curve: curve))
    }

    /// `k·self`.
    /// - Parameter k: A non-zero scalar of the same curve.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for zero.
    public func multiplied(by k: Scalar) throws -> Point {
        precondition(k.curve == curve, "scalar and point of two curves")
        guard !k.isZero else { throw ShareCryptoError(.invalidScalar, "k·P with k = 0 is the identity") }
        switch curve {
        case .secp256k1: return try secp256k1Multiplied(by: k)
        case .ed25519: return try ed25519Multiplied(by: k)
        }
    }

    /// `n·self` for a small public multiplier, by variable-time double-and-add: far cheaper than a
    /// full constant-time `k·P` for party indices and their low powers. Never use it on secrets.
    /// - Parameter n: The public multiplier, at least 1.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for 0, ``ShareCryptoError/Code/invalidPoint``
    ///   when the result is the identity.
    public func multiplied(byPublicSmall n: UInt64) throws -> Point {
        guard n > 0 else { throw ShareCryptoError(.invalidScalar, "n·P with n = 0 is the identity") }
        // Beyond 5 bits the adds cost more than one constant-time multiplication.
        guard n < 32 else { return try multiplied(by: Scalar(n, curve: curve)) }
        var result = self
        for bit in stride(from: 63 - n.leadingZeroBitCount - 1, through: 0, by: -1) {
            result = try Point.sum([result, result])
            if (n >> UInt64(bit)) & 1 == 1 { result = try Point.sum([result, self]) }
        }
        return result
    }

    /// `lhs + rhs`.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the sum is the identity.
    public static func + (lhs: Point, rhs: Point) throws -> Point {
        try sum([lhs, rhs])
    }

    /// The sum of one or more points.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the list is empty or the sum is the identity.
    public static func sum(_ points: [Point]) throws -> Point {
        guard let first = points.first else { throw ShareCryptoError(.invalidPoint, "the empty sum is the identity") }
        precondition(points.allSatisfy { $0.curve == first.curve }, "points of two curves")
        if points.count == 1 { return first }
        switch first.curve {
        case .secp256k1: return try secp256k1Sum(points)
        case .ed25519: return try ed25519Sum(points)
        }
    }

    /// `−self`: never the identity, since `self` is not.
    public var negated: Point {
        switch curve {
        case .secp256k1: secp256k1Negated()
        case .ed25519: ed25519Negated()
        }
    }

    /// `lhs − rhs`.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the difference is the identity (`lhs == rhs`).
    public static func - (lhs: Point, rhs: Point) throws -> Point {
        try sum([lhs, rhs.negated])
    }

    /// The sum of zero or more points, `nil` standing for the identity: for protocol steps whose
    /// intermediate sums may be the identity (an aggregate nonce half) and are checked later.
    /// - Parameter points: Points of one curve; `nil` entries are identities.
    /// - Returns: The sum, or `nil` when it is the identity.
    public static func sumAllowingIdentity(_ points: [Point?]) -> Point? {
        let present = points.compactMap { $0 }
        guard let first = present.first else { return nil }
        precondition(present.allSatisfy { $0.curve == first.curve }, "points of two curves")
        if present.count == 1 { return first }
        switch first.curve {
        case .secp256k1: return secp256k1SumAllowingIdentity(present)
        case .ed25519: return ed25519SumAllowingIdentity(present)
        }
    }

    /// `k·G`, `nil` (the identity) for k = 0.
    /// - Parameter k: Any scalar.
    public static func generatorTimesAllowingIdentity(_ k: Scalar) -> Point? {
        // A canonical non-zero scalar always gives a point: prime-order group.
        k.isZero ? nil : try? Point(generatorTimes: k)
    }

    /// `k·self`, `nil` (the identity) for k = 0; `self` has prime order, so no other k gives the identity.
    /// - Parameter k: Any scalar of the same curve.
    public func multipliedAllowingIdentity(by k: Scalar) -> Point? {
        k.isZero ? nil : try? multiplied(by: k)
    }

    /// `Σ c_k·P_k`; zero coefficients are skipped.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` when the result is the identity.
    public static func linearCombination(_ terms: [(Scalar, Point)]) throws -> Point {
        let one = terms.first.map { Scalar(1, curve: $0.1.curve) }
        let products = try terms.compactMap { coefficient, point -> Point? in
            if coefficient.isZero { return nil }
            if coefficient == one { return point }
            return try point.multiplied(by: coefficient)
        }
        return try sum(products)
    }

    public static func == (lhs: Point, rhs: Point) -> Bool {
        lhs.curve == rhs.curve && lhs.rawRepresentation == rhs.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(curve)
        hasher.combine(rawRepresentation)
    }

    /// Lowercase hex of the encoding.
    public var hex: String { Hex.encode(rawRepresentation) }

    public var description: String { "Point(\(curve), \(hex))" }
}
