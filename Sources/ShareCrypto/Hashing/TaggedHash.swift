/// BIP-340 tagged hashes: `SHA256(SHA256(tag) || SHA256(tag) || x)`.
enum TaggedHash {
    /// The tagged hash of public or secret pieces; the digest is secret when any piece is.
    /// - Parameters:
    ///   - tag: The UTF-8 tag, e.g. `BIP0340/challenge`.
    ///   - inputs: The message pieces, concatenated.
    static func hash(tag: String, _ inputs: [HashInput]) -> SecureBytes {
        let tagHash = SHA256.hash(Array(tag.utf8))
        return SHA2Hasher.hashSecret(.sha256, [.bytes(tagHash + tagHash)] + inputs)
    }

    /// The tagged hash of public input, as public bytes.
    static func publicHash(tag: String, _ bytes: [UInt8]) -> [UInt8] {
        hash(tag: tag, [.bytes(bytes)]).revealedBytes()
    }
}
