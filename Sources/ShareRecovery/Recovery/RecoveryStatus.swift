/// A recovery's progress, in the order docs/formats.md §8 fixes. `parsingShare` appears twice: once for
/// the decrypted user backup share, once for the newly generated signing share.
public enum RecoveryStatus: String, Sendable, CaseIterable, CustomStringConvertible {
    case readingShare, decryptingShare, parsingShare, recoveringSigningShare, generatingShare, storingShare, done

    /// The full sequence of a successful recovery (§8).
    public static let sequence: [RecoveryStatus] = [
        .readingShare, .decryptingShare, .parsingShare, .recoveringSigningShare, .generatingShare, .parsingShare,
        .storingShare, .done,
    ]

    public var description: String { rawValue }
}
