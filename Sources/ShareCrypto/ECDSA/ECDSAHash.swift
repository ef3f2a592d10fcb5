/// Every hash of the threshold ECDSA protocol (docs/ecdsa.md "Hashes"): SHA-256 or SHA-512 over a
/// framed input, `len(tag) || tag || len(part) || part || …` with 4-byte big-endian lengths and the
/// tag prefixed by `share-recovery/ecdsa@1/`, so no two uses can collide.
enum ECDSAHash {
    static let tagPrefix = "share-recovery/ecdsa@1/"

    /// A hasher that has absorbed the framed tag and parts: more framed parts may follow.
    static func hasher(_ function: SHA2Function, _ tag: String, _ parts: [HashInput]) -> SHA2Hasher {
        let hasher = SHA2Hasher(function)
        for part in [HashInput.bytes(Array((tagPrefix + tag).utf8))] + parts {
            let count: Int
            switch part {
            case .bytes(let bytes): count = bytes.count
            case .secret(let secret): count = secret.count
            }
            hasher.update(.bytes(ECDSAWire.uint32(count)))
            hasher.update(part)
        }
        return hasher
    }

    /// SHA-256 of public input.
    static func digest(_ tag: String, _ parts: [HashInput]) -> [UInt8] {
        hasher(.sha256, tag, parts).finalize()
    }

    /// SHA-256 of input that holds a secret, kept secret.
    static func secretDigest(_ tag: String, _ parts: [HashInput]) -> SecureBytes {
        hasher(.sha256, tag, parts).finalizeSecret()
    }

    /// SHA-512 read big-endian and reduced mod n: a scalar with bias below 2^-250.
    static func scalar(_ tag: String, _ parts: [HashInput]) -> Scalar {
        Scalar(reducingBigEndian: hasher(.sha512, tag, parts).finalizeSecret(), curve: .secp256k1)
    }
}
