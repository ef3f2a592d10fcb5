import CLibcrypto
import CSecp256k1
import CSodium

/// The bare C calls behind each primitive, for the benchmark's floors: what a step could cost if
/// it did nothing but its unavoidable curve and symmetric operations. Package-internal: benchmarks
/// only, never a production path (no validation beyond what the C call does).
package struct RawPrimitives: @unchecked Sendable {
    // Immutable after init; the C calls below only read these buffers.
    private let secpContextOwner = BenchSecp256k1Context()
    private var secpContext: OpaquePointer { secpContextOwner.pointer }
    /// The object that owns the C context, so a test can check it goes away with the last copy.
    package var secp256k1ContextOwner: AnyObject { secpContextOwner }
    private let secpScalar: [UInt8]
    private var secpPoint = secp256k1_pubkey()
    private var secpOtherPoint = secp256k1_pubkey()
    private let edScalar: [UInt8]
    private let edPoint: [UInt8]
    private let boxKeyPair: SealingKeyPair
    private let sealed: [UInt8]
    private let message: [UInt8]
    private let aeadKey: [UInt8]
    private let aeadNonce: [UInt8]
    private let aeadCiphertext: [UInt8]
    private let hmacKey: [UInt8]

    /// Prepares inputs for every floor. `recordSize` is the plaintext size of one share record.
    package init(recordSize: Int = 150) {
        Sodium.ensureInitialised()
        let random = SystemRandom()
        secpScalar = Scalar.random(on: .secp256k1, using: random).rawRepresentation.revealedBytes()
        _ = secp256k1_ec_pubkey_create(secpContextOwner.pointer, &secpPoint, secpScalar)
        secpOtherPoint = secpPoint
        _ = secp256k1_ec_pubkey_tweak_add(secpContextOwner.pointer, &secpOtherPoint, secpScalar)
        edScalar = Scalar.random(on: .ed25519, using: random).rawRepresentation.revealedBytes()
        var edOut = [UInt8](repeating: 0, count: 32)
        _ = crypto_scalarmult_ed25519_base_noclamp(&edOut, edScalar)
        edPoint = edOut
        boxKeyPair = SealingKeyPair(using: random)
        let message = [UInt8](repeating: 7, count: recordSize)
        var box = [UInt8](repeating: 0, count: recordSize + 48)
        _ = crypto_box_seal(&box, message, UInt64(message.count), boxKeyPair.publicKey)
        sealed = box
        self.message = message
        aeadKey = random.bytes(count: 32)
        aeadNonce = random.bytes(count: 24)
        var ct = [UInt8](repeating: 0, count: recordSize + 16)
        var produced: UInt64 = 0
        _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
            &ct, &produced, message, UInt64(message.count), aeadNonce, UInt64(aeadNonce.count), nil, aeadNonce, aeadKey)
        aeadCiphertext = ct
        hmacKey = random.bytes(count: 32)
    }

    /// secp256k1 k·G (`secp256k1_ec_pubkey_create`).
    package func secp256k1GeneratorMultiply() -> Bool {
        var out = secp256k1_pubkey()
        return secp256k1_ec_pubkey_create(secpContext, &out, secpScalar) == 1
    }

    /// secp256k1 k·P (`secp256k1_ec_pubkey_tweak_mul`).
    package func secp256k1PointMultiply() -> Bool {
        var point = secpPoint
        return secp256k1_ec_pubkey_tweak_mul(secpContext, &point, secpScalar) == 1
    }

    /// secp256k1 P+Q (`secp256k1_ec_pubkey_combine` of two points).
    package func secp256k1Add() -> Bool {
        var first = secpPoint
        var second = secpOtherPoint
        var out = secp256k1_pubkey()
        return withUnsafePointer(to: &first) { a in
            withUnsafePointer(to: &second) { b in
                var pointers: [UnsafePointer<secp256k1_pubkey>?] = [a, b]
                return secp256k1_ec_pubkey_combine(secpContext, &out, &pointers, 2) == 1
            }
        }
    }

    /// secp256k1 compressed point parse (`secp256k1_ec_pubkey_parse`, one square root).
    package func secp256k1Parse() -> Bool {
        var point = secpPoint
        var bytes = [UInt8](repeating: 0, count: 33)
        var count = 33
        _ = secp256k1_ec_pubkey_serialize(secpContext, &bytes, &count, &point, (1 << 1) | (1 << 8))
        var out = secp256k1_pubkey()
        return secp256k1_ec_pubkey_parse(secpContext, &out, bytes, 33) == 1
    }

    /// ed25519 k·G (`crypto_scalarmult_ed25519_base_noclamp`).
    package func ed25519GeneratorMultiply() -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_scalarmult_ed25519_base_noclamp(&out, edScalar) == 0
    }

    /// ed25519 k·P (`crypto_scalarmult_ed25519_noclamp`, which validates P).
    package func ed25519PointMultiply() -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_scalarmult_ed25519_noclamp(&out, edScalar, edPoint) == 0
    }

    /// ed25519 P+Q (`crypto_core_ed25519_add`).
    package func ed25519Add() -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_core_ed25519_add(&out, edPoint, edPoint) == 0
    }

    /// ed25519 point validation (`crypto_core_ed25519_is_valid_point`).
    package func ed25519Parse() -> Bool {
        crypto_core_ed25519_is_valid_point(edPoint) == 1
    }

    /// XChaCha20-Poly1305 decryption of one share-record-sized message.
    package func aeadDecrypt() -> Bool {
        var out = [UInt8](repeating: 0, count: aeadCiphertext.count - 16)
        var produced: UInt64 = 0
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
            &out, &produced, nil, aeadCiphertext, UInt64(aeadCiphertext.count), aeadNonce, UInt64(aeadNonce.count),
            aeadNonce, aeadKey) == 0
    }

    /// HKDF-SHA256 with a 32-byte output: two HMAC-SHA256 calls (extract, one expand block).
    package func hkdf() -> Bool {
        var prk = [UInt8](repeating: 0, count: 32)
        var okm = [UInt8](repeating: 0, count: 32)
        let ok1 = crypto_auth_hmacsha256(&prk, hmacKey, 32, aeadNonce)
        let ok2 = crypto_auth_hmacsha256(&okm, aeadNonce, 24, prk)
        return ok1 == 0 && ok2 == 0
    }

    /// `crypto_pwhash` Argon2id13 with a 32-byte output.
    package func argon2id(opslimit: UInt32, memlimitKiB: UInt32) -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        return crypto_pwhash(
            &out, 32, "password", 8, aeadNonce, UInt64(opslimit), Int(memlimitKiB) * 1024,
            crypto_pwhash_ALG_ARGON2ID13) == 0
    }

    /// SHA-256 of 128 bytes (libcrypto's `SHA256`, the implementation `SHA2Hasher` uses): one block of
    /// a BIP-340 tagged hash or of hash_to_field's expand_message_xmd.
    package func sha256() -> Bool {
        var out = [UInt8](repeating: 0, count: 32)
        return CLibcrypto.SHA256(message, min(128, message.count), &out) != nil
    }

    /// SHA-512 of 128 bytes (libcrypto's `SHA512`): one FROST(Ed25519, SHA-512) hash to scalar.
    package func sha512() -> Bool {
        var out = [UInt8](repeating: 0, count: 64)
        return CLibcrypto.SHA512(message, min(128, message.count), &out) != nil
    }

    /// `crypto_box_seal` of one share record.
    package func seal() -> Bool {
        var box = [UInt8](repeating: 0, count: sealed.count)
        return crypto_box_seal(&box, message, UInt64(message.count), boxKeyPair.publicKey) == 0
    }

    /// `crypto_box_seal_open` of one share record.
    package func open() -> Bool {
        var out = [UInt8](repeating: 0, count: sealed.count - 48)
        return boxKeyPair.secretKey.withUnsafeBytes { sk in
            crypto_box_seal_open(&out, sealed, UInt64(sealed.count), boxKeyPair.publicKey, sk.u8) == 0
        }
    }
}

/// The benchmark's own secp256k1 context, destroyed with the last copy of its ``RawPrimitives``
/// (house style: a final class frees each C context in `deinit`; a bare pointer in the struct leaked
/// one context per run, which AddressSanitizer's leak check reported).
package final class BenchSecp256k1Context: @unchecked Sendable {
    let pointer: OpaquePointer

    init() {
        // SECP256K1_CONTEXT_NONE == 1; the flag macros are not imported into Swift.
        guard let context = secp256k1_context_create(1) else { fatalError("secp256k1_context_create failed") }
        pointer = context
    }

    deinit { secp256k1_context_destroy(pointer) }
}
