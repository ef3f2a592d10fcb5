/// The curves of docs/formats.md §1, by their wire id.
public enum Curve: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// secp256k1: big-endian scalars, 33-byte compressed SEC1 points.
    case secp256k1 = 1
    /// ed25519: little-endian scalars, 32-byte canonical Edwards points.
    case ed25519 = 2

    /// Scalar encoding size on both curves.
    public static let scalarCount = 32

    /// The name used in JSON forms (`secp256k1`, `ed25519`).
    public var name: String {
        switch self {
        case .secp256k1: "secp256k1"
        case .ed25519: "ed25519"
        }
    }

    /// Parses a JSON curve name; `nil` for anything else.
    /// - Parameter name: `secp256k1` or `ed25519`, exactly.
    public init?(name: String) {
        switch name {
        case "secp256k1": self = .secp256k1
        case "ed25519": self = .ed25519
        default: return nil
        }
    }

    /// Point encoding size: 33 for secp256k1, 32 for ed25519.
    public var pointCount: Int {
        switch self {
        case .secp256k1: 33
        case .ed25519: 32
        }
    }

    public var description: String { name }

    /// The group order's scalar field.
    var field: ScalarField {
        switch self {
        case .secp256k1: Curve.secp256k1Field
        case .ed25519: Curve.ed25519Field
        }
    }

    // n = FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE BAAEDCE6 AF48A03B BFD25E8C D0364141
    private static let secp256k1Field = ScalarField(
        modulus: .init(
            l0: 0xBFD2_5E8C_D036_4141, l1: 0xBAAE_DCE6_AF48_A03B,
            l2: 0xFFFF_FFFF_FFFF_FFFE, l3: 0xFFFF_FFFF_FFFF_FFFF))
    // l = 2^252 + 27742317777372353535851937790883648493
    private static let ed25519Field = ScalarField(
        modulus: .init(
            l0: 0x5812_631A_5CF5_D3ED, l1: 0x14DE_F9DE_A2F7_9CD6,
            l2: 0x0000_0000_0000_0000, l3: 0x1000_0000_0000_0000))

    /// Reads a 32-byte scalar in this curve's byte order.
    func limbs(from bytes: UnsafeRawBufferPointer) -> ScalarField.Limbs {
        switch self {
        case .secp256k1: ScalarField.Limbs(bigEndian: bytes)
        case .ed25519: ScalarField.Limbs(littleEndian: bytes)
        }
    }

    /// Writes a 32-byte scalar in this curve's byte order.
    func write(_ limbs: ScalarField.Limbs, to out: UnsafeMutableRawBufferPointer) {
        switch self {
        case .secp256k1: limbs.writeBigEndian(to: out)
        case .ed25519: limbs.writeLittleEndian(to: out)
        }
    }
}
