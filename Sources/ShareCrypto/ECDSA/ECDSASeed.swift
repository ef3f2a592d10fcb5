/// How one party's 32-byte session seed becomes every random value it draws (docs/ecdsa.md "Random
/// values"): a pair setup with peer j reads `DeterministicRandom` keyed by
/// `H(seed/pair-setup, seed, j)`, a signing session the one keyed by `H(seed/signing, seed)`.
/// In production the seed comes from the system CSPRNG; the `ecdsa@1` vectors publish it.
package enum ECDSASeed {
    /// The random source of the pair setup with `peer`.
    package static func pairSetup(_ seed: SecureBytes, peer: Int) throws -> DeterministicRandom {
        try check(seed)
        return DeterministicRandom(
            seed: ECDSAHash.secretDigest("seed/pair-setup", [.secret(seed), .bytes([UInt8(peer)])]).revealedBytes())
    }

    /// The random source of the signing session.
    package static func signing(_ seed: SecureBytes) throws -> DeterministicRandom {
        try check(seed)
        return DeterministicRandom(seed: ECDSAHash.secretDigest("seed/signing", [.secret(seed)]).revealedBytes())
    }

    private static func check(_ seed: SecureBytes) throws {
        guard seed.count == 32 else {
            throw ShareCryptoError(.invalidLength, "an ECDSA session seed is 32 bytes, got \(seed.count)")
        }
    }
}
