/// A BIP-32 path of non-hardened steps below a wallet's key, written `m/0/1` (docs/derivation.md).
///
/// Hardened steps need the parent's private key, which a threshold wallet has nowhere, so they are
/// refused rather than silently read as non-hardened.
public struct DerivationPath: Sendable, Hashable, CustomStringConvertible {
    /// The child indices from the root, each below 2^31.
    public let indices: [UInt32]

    /// The root, `m`: no derivation.
    public static let root = DerivationPath(checked: [])

    /// The deepest path a BIP-32 key can carry (its depth is one byte).
    public static let maximumDepth = 255

    /// A path from its indices.
    /// - Parameter indices: Non-hardened indices (below 2^31), at most 255 of them.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` for a hardened index or a path too deep.
    public init(indices: [UInt32]) throws(ShareRecoveryError) {
        guard indices.count <= Self.maximumDepth else {
            throw ShareRecoveryError(
                .invalidParameters, "a BIP-32 path has at most \(Self.maximumDepth) steps, this one \(indices.count)")
        }
        if let hardened = indices.first(where: { $0 >= 1 << 31 }) {
            throw ShareRecoveryError(
                .invalidParameters,
                "index \(hardened) is hardened (≥ 2^31); a threshold key derives non-hardened children only")
        }
        self.init(checked: indices)
    }

    /// Parses `m`, `m/0`, `m/0/1`, … (decimal indices without sign or leading zeros).
    /// - Parameter text: The path.
    /// - Throws: ``ShareRecoveryError/Code/invalidParameters`` naming the step: a hardened mark
    ///   (`'`, `h`, `H`), an index ≥ 2^31, anything that is not a decimal index, a missing `m`, or
    ///   more than 255 steps.
    public init(_ text: String) throws(ShareRecoveryError) {
        var steps = text.split(separator: "/", omittingEmptySubsequences: false)
        guard steps.first == "m" else {
            throw ShareRecoveryError(
                .invalidParameters, "a derivation path starts with m (e.g. m/0/1), got \"\(text.prefix(80))\"")
        }
        steps.removeFirst()
        var indices: [UInt32] = []
        for (position, step) in steps.enumerated() {
            let name = "step \(position + 1) of \(text.prefix(80))"
            if let last = step.last, "'hH".contains(last) {
                throw ShareRecoveryError(
                    .invalidParameters,
                    "\(name) (\(step)) is hardened; a threshold key has no private key to derive hardened children from, so only non-hardened steps (m/0/1) are allowed"
                )
            }
            guard !step.isEmpty, step.utf8.allSatisfy({ (0x30...0x39).contains($0) }), step == "0" || step.first != "0"
            else {
                throw ShareRecoveryError(
                    .invalidParameters, "\(name) (\"\(step.prefix(20))\") is not a decimal index without leading zeros")
            }
            guard step.count <= 10, let value = UInt64(step), value < 1 << 31 else {
                throw ShareRecoveryError(
                    .invalidParameters,
                    "\(name) (\(step.prefix(20))) is not below 2^31; indices from 2^31 on are hardened, which a threshold key cannot derive"
                )
            }
            indices.append(UInt32(value))
        }
        try self.init(indices: indices)
    }

    private init(checked indices: [UInt32]) {
        self.indices = indices
    }

    /// Whether this is the root (no step).
    public var isRoot: Bool { indices.isEmpty }

    /// `m/0/1`.
    public var description: String { (["m"] + indices.map(String.init)).joined(separator: "/") }
}
