/// Every hash of the threshold ECDSA protocol (docs/ecdsa.md "Hashes"): SHA-256 or SHA-512 over a
/// framed input, `len(tag) || tag || len(part) || part || …` with 4-byte big-endian lengths and the
/// tag prefixed by `share-recovery/ecdsa@1/`, so no two uses can collide.
enum ECDSAHash {
    static let tagPrefix = "share-recovery/ecdsa@1/"

    private static func hasher(_ function: SHA2Function, _ tag: String, _ parts: [HashInput]) -> SHA2Hasher {
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

    /// ``expand(_:_:count:)`` of input that holds a secret, kept secret.
    static func secretExpand(_ tag: String, _ parts: [HashInput], count: Int) -> SecureBytes {
        SecureBytes(count: count) { out in
            var offset = 0
            var block = 0
            while offset < count {
                let digest = secretDigest(tag, parts + [.bytes(ECDSAWire.uint32(block))])
                let take = min(32, count - offset)
                digest.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + take])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<take]))
                }
                offset += take
                block += 1
            }
        }
    }

    /// `count` bytes of SHA-256 in counter mode: block k is the digest of the parts and the 4-byte k.
    /// The parts are absorbed once and the hasher copied for each block (the OT-extension check
    /// expands 10,752 bytes from a 21.5 KB message: hashing it again per block was 113,000 blocks).
    static func expand(_ tag: String, _ parts: [HashInput], count: Int) -> [UInt8] {
        let prefix = hasher(.sha256, tag, parts)
        let counterLength = ECDSAWire.uint32(4)
        var out = [UInt8]()
        out.reserveCapacity(count + 32)
        var block = 0
        while out.count < count {
            let hasher = prefix.copy()
            hasher.update(.bytes(counterLength))
            hasher.update(.bytes(ECDSAWire.uint32(block)))
            out += hasher.finalize()
            block += 1
        }
        return Array(out.prefix(count))
    }
}
