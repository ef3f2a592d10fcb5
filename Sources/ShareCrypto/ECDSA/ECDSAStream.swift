import CSodium

/// The keystreams of the threshold ECDSA transcript (docs/ecdsa.md "Keystreams"): ChaCha20 in its
/// original form (64-bit nonce, block counter from 0; libsodium `crypto_stream_chacha20`) and
/// XChaCha20 (24-byte nonce; `crypto_stream_xchacha20`). The OT extension's expansions run on them,
/// at a fraction of a hash's cost per byte.
enum ECDSAStream {
    /// Fills `out` with the ChaCha20 keystream under `key` (32 bytes) with nonce 0.
    static func chacha20(key: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(key.count == 32, "a ChaCha20 key is 32 bytes")
        guard out.count > 0 else { return }
        var nonce: UInt64 = 0
        withUnsafeBytes(of: &nonce) { nonce in
            _ = crypto_stream_chacha20(out.u8, UInt64(out.count), nonce.u8, key.u8)
        }
    }

    /// Fills `out` with the XChaCha20 keystream under `key` (32 bytes) and the first 24 bytes of `nonce`.
    static func xchacha20(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(key.count == 32 && nonce.count >= 24, "an XChaCha20 key is 32 bytes and its nonce 24")
        guard out.count > 0 else { return }
        _ = crypto_stream_xchacha20(out.u8, UInt64(out.count), nonce.u8, key.u8)
    }
}
