#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

// BIP-340 x-only keys on secp256k1: a point is named by its x coordinate, standing for the point
// with that x and an even y. Calling these on an ed25519 point is a programming error.
extension Point {
    /// Whether the y coordinate is even (the compressed prefix is 0x02). secp256k1 only.
    public var hasEvenY: Bool {
        precondition(curve == .secp256k1, "x-only keys are secp256k1's")
        return rawRepresentation[0] == 0x02
    }

    /// The 32-byte x coordinate (BIP-340 `bytes(P)`). secp256k1 only.
    public var xOnlyRepresentation: [UInt8] {
        precondition(curve == .secp256k1, "x-only keys are secp256k1's")
        return Array(rawRepresentation[1...])
    }

    /// `self` or `−self`, whichever has an even y (BIP-340 `with_even_y`). secp256k1 only.
    public var withEvenY: Point { hasEvenY ? self : negated }

    /// BIP-340 `lift_x`: the point with this x coordinate and an even y.
    /// - Parameter xOnly: 32 bytes, big-endian x < p.
    /// - Throws: ``ShareCryptoError/Code/invalidPoint`` for a wrong size or an x that is on no point.
    public init(xOnly: some ContiguousBytes) throws {
        let bytes = xOnly.withUnsafeBytes { Array($0) }
        guard bytes.count == 32 else {
            throw ShareCryptoError(.invalidPoint, "an x-only key is 32 bytes, got \(bytes.count)")
        }
        self = try Point.parseSecp256k1([0x02] + bytes)
    }
}
