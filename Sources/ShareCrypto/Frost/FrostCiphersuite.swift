/// The two RFC 9591 ciphersuites of docs/formats.md §11 mode `rfc9591`, with their hash functions
/// (RFC 9591 §6.1, §6.5) and frost-core's DKG challenge hash HDKG (docs/formats.md §10).
public enum FrostCiphersuite: Sendable, CaseIterable {
    /// FROST(Ed25519, SHA-512), RFC 9591 §6.1.
    case ed25519SHA512
    /// FROST(secp256k1, SHA-256), RFC 9591 §6.5.
    case secp256k1SHA256

    /// The ciphersuite of a curve.
    /// - Parameter curve: The curve.
    public init(curve: Curve) {
        switch curve {
        case .ed25519: self = .ed25519SHA512
        case .secp256k1: self = .secp256k1SHA256
        }
    }

    /// The curve.
    public var curve: Curve {
        switch self {
        case .ed25519SHA512: .ed25519
        case .secp256k1SHA256: .secp256k1
        }
    }

    /// The ciphersuite's contextString.
    var contextString: [UInt8] {
        switch self {
        case .ed25519SHA512: Array("FROST-ED25519-SHA512-v1".utf8)
        case .secp256k1SHA256: Array("FROST-secp256k1-SHA256-v1".utf8)
        }
    }

    /// H1, the binding factor hash ("rho").
    func h1(_ message: [UInt8]) -> Scalar { hashToScalar(tag: "rho", [.bytes(message)]) }

    /// H2, the challenge hash. On ed25519 it is bare SHA-512 (no context), so that the aggregate is
    /// an RFC 8032 signature.
    func h2(_ message: [UInt8]) -> Scalar {
        switch self {
        case .ed25519SHA512:
            let digest = SHA2Hasher.hash(.sha512, [.bytes(message)])
            return digest.withUnsafeBytes { Scalar(reducingLittleEndian64: $0, curve: .ed25519) }
        case .secp256k1SHA256:
            return hashToScalar(tag: "chal", [.bytes(message)])
        }
    }

    /// H3, the nonce hash; its input holds the signer's secret share.
    func h3(_ message: [HashInput]) -> Scalar { hashToScalar(tag: "nonce", message) }

    /// H4, the message hash inside the binding factor input.
    func h4(_ message: [UInt8]) -> [UInt8] { hash(tag: "msg", message) }

    /// H5, the commitment list hash inside the binding factor input.
    func h5(_ message: [UInt8]) -> [UInt8] { hash(tag: "com", message) }

    /// frost-core's HDKG, the DKG proof-of-knowledge challenge: H1's construction with the tag "dkg".
    func hdkg(_ message: [UInt8]) -> Scalar { hashToScalar(tag: "dkg", [.bytes(message)]) }

    private var hashFunction: SHA2Function {
        switch self {
        case .ed25519SHA512: .sha512
        case .secp256k1SHA256: .sha256
        }
    }

    /// `Hash(contextString || tag || m)`.
    private func hash(tag: String, _ message: [UInt8]) -> [UInt8] {
        SHA2Hasher.hash(hashFunction, [.bytes(contextString + Array(tag.utf8)), .bytes(message)])
    }

    /// ed25519: SHA-512(contextString || tag || m) mod l, little-endian.
    /// secp256k1: hash_to_field(m) with DST = contextString || tag.
    private func hashToScalar(tag: String, _ message: [HashInput]) -> Scalar {
        let prefix = contextString + Array(tag.utf8)
        switch self {
        case .ed25519SHA512:
            let digest = SHA2Hasher.hashSecret(.sha512, [.bytes(prefix)] + message)
            return Scalar(reducingLittleEndian64: digest, curve: .ed25519)
        case .secp256k1SHA256:
            return HashToField.secp256k1Scalar(message, domain: prefix)
        }
    }
}
