#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An element of a curve's scalar field (mod the group order), held as its canonical 32-byte
/// encoding in ``SecureBytes``. Equality is constant time; `description` is redacted.
///
/// Arithmetic between scalars of two different curves is a programming error (a precondition):
/// every scalar the formats layer makes takes its curve from the one record it belongs to.
public struct Scalar: Sendable, Equatable, CustomStringConvertible {
    /// The curve whose group order this scalar is reduced by.
    public let curve: Curve
    /// The canonical encoding (big-endian for secp256k1, little-endian for ed25519).
    public let rawRepresentation: SecureBytes

    /// Parses a canonical scalar (< order); zero is allowed.
    /// - Parameters:
    ///   - rawRepresentation: 32 bytes in the curve's byte order.
    ///   - curve: The curve.
    /// - Throws: ``ShareCryptoError/Code/invalidLength`` for a wrong size,
    ///   ``ShareCryptoError/Code/invalidScalar`` for a value ≥ the order.
    public init(rawRepresentation: some ContiguousBytes, curve: Curve) throws {
        let secure = SecureBytes(copying: rawRepresentation)
        try self.init(secure: secure, curve: curve)
    }

    /// Parses a canonical scalar held in a secret buffer; zero is allowed.
    /// - Throws: ``ShareCryptoError/Code/invalidLength``, ``ShareCryptoError/Code/invalidScalar``.
    public init(secure: SecureBytes, curve: Curve) throws {
        guard secure.count == Curve.scalarCount else {
            throw ShareCryptoError(.invalidLength, "a scalar is 32 bytes, got \(secure.count)")
        }
        let canonical = secure.withUnsafeBytes { curve.field.isCanonical(curve.limbs(from: $0)) }
        guard canonical else { throw ShareCryptoError(.invalidScalar, "scalar is not below the \(curve) group order") }
        self.curve = curve
        self.rawRepresentation = secure
    }

    /// Parses a secret share scalar: canonical and non-zero (docs/formats.md §1).
    /// - Throws: ``ShareCryptoError/Code/invalidLength``, ``ShareCryptoError/Code/invalidScalar``.
    public init(secret: SecureBytes, curve: Curve) throws {
        try self.init(secure: secret, curve: curve)
        guard !isZero else { throw ShareCryptoError(.invalidScalar, "a secret scalar must not be zero") }
    }

    /// A small public integer, e.g. a party index.
    /// - Parameters:
    ///   - value: The integer.
    ///   - curve: The curve.
    public init(_ value: UInt64, curve: Curve) {
        self.init(plain: ScalarField.Limbs(l0: value, l1: 0, l2: 0, l3: 0), curve: curve)
    }

    /// Wraps a reduced plain (non-Montgomery) value.
    init(plain limbs: ScalarField.Limbs, curve: Curve) {
        self.curve = curve
        self.rawRepresentation = SecureBytes(count: Curve.scalarCount) { curve.write(limbs, to: $0) }
    }

    init(montgomery limbs: ScalarField.Limbs, curve: Curve) {
        self.init(plain: curve.field.fromMontgomery(limbs), curve: curve)
    }

    /// A uniformly random non-zero scalar: 64 random bytes reduced mod the order (bias < 2^-190).
    /// - Parameters:
    ///   - curve: The curve.
    ///   - random: The random source (the system CSPRNG in production).
    public static func random(on curve: Curve, using random: some RandomSource = SystemRandom()) -> Scalar {
        while true {
            let wide = random.secureBytes(count: 64)
            let scalar = wide.withUnsafeBytes { bytes in
                let low = ScalarField.Limbs(littleEndian: UnsafeRawBufferPointer(rebasing: bytes[0..<32]))
                let high = ScalarField.Limbs(littleEndian: UnsafeRawBufferPointer(rebasing: bytes[32..<64]))
                return Scalar(montgomery: curve.field.reduceWide(low: low, high: high), curve: curve)
            }
            if !scalar.isZero { return scalar }
        }
    }

    /// Plain limbs of this scalar.
    var limbs: ScalarField.Limbs { rawRepresentation.withUnsafeBytes { curve.limbs(from: $0) } }
    /// Montgomery form of this scalar.
    var montgomery: ScalarField.Limbs { curve.field.toMontgomery(limbs) }

    /// Whether the scalar is zero, in constant time.
    public var isZero: Bool { ScalarField.isZero(limbs) }

    /// Sum mod the order.
    public static func + (lhs: Scalar, rhs: Scalar) -> Scalar {
        precondition(lhs.curve == rhs.curve, "scalars of two curves")
        return Scalar(plain: lhs.curve.field.add(lhs.limbs, rhs.limbs), curve: lhs.curve)
    }

    /// Difference mod the order.
    public static func - (lhs: Scalar, rhs: Scalar) -> Scalar {
        precondition(lhs.curve == rhs.curve, "scalars of two curves")
        return Scalar(plain: lhs.curve.field.subtract(lhs.limbs, rhs.limbs), curve: lhs.curve)
    }

    /// Product mod the order.
    public static func * (lhs: Scalar, rhs: Scalar) -> Scalar {
        precondition(lhs.curve == rhs.curve, "scalars of two curves")
        let field = lhs.curve.field
        // mont(a, mont(b)) = a·b·R·R⁻¹ = a·b: one conversion instead of two.
        return Scalar(plain: field.multiply(lhs.limbs, rhs.montgomery), curve: lhs.curve)
    }

    /// The additive inverse.
    public var negated: Scalar { Scalar(plain: curve.field.negate(limbs), curve: curve) }

    /// The multiplicative inverse.
    /// - Throws: ``ShareCryptoError/Code/invalidScalar`` for zero.
    public func inverted() throws -> Scalar {
        guard !isZero else { throw ShareCryptoError(.invalidScalar, "zero has no inverse") }
        return Scalar(montgomery: curve.field.inverse(montgomery), curve: curve)
    }

    public static func == (lhs: Scalar, rhs: Scalar) -> Bool {
        lhs.curve == rhs.curve && lhs.rawRepresentation == rhs.rawRepresentation
    }

    public var description: String { "Scalar(\(curve), redacted)" }
}
