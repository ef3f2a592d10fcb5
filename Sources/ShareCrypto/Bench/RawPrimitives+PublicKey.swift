import CSecp256k1
import CSodium

extension RawPrimitives {
    /// The public key of a private key given as plain bytes, by the bare C call alone, for tests
    /// that check an exported key (docs/eject.md) outside the engine's `Scalar` and `Point` types:
    /// `secp256k1_ec_pubkey_create` with a fresh context and the compressed serialisation on
    /// secp256k1; `crypto_scalarmult_ed25519_base_noclamp` on ed25519 (the scalar taken as is,
    /// without RFC 8032's hashing and clamping of a seed).
    /// - Parameters:
    ///   - privateKey: 32 bytes: big-endian on secp256k1, little-endian on ed25519.
    ///   - curve: The curve.
    /// - Returns: The 33- or 32-byte public key, or `nil` when the C call refuses the key.
    package static func publicKey(ofPrivateKey privateKey: [UInt8], curve: Curve) -> [UInt8]? {
        guard privateKey.count == 32 else { return nil }
        switch curve {
        case .secp256k1:
            let context = BenchSecp256k1Context()
            var point = secp256k1_pubkey()
            guard secp256k1_ec_pubkey_create(context.pointer, &point, privateKey) == 1 else { return nil }
            var bytes = [UInt8](repeating: 0, count: 33)
            var count = 33
            // SECP256K1_EC_COMPRESSED.
            _ = secp256k1_ec_pubkey_serialize(context.pointer, &bytes, &count, &point, (1 << 1) | (1 << 8))
            return bytes
        case .ed25519:
            Sodium.ensureInitialised()
            var out = [UInt8](repeating: 0, count: 32)
            guard crypto_scalarmult_ed25519_base_noclamp(&out, privateKey) == 0 else { return nil }
            return out
        }
    }
}
