import ArgumentParser
import ShareCrypto
import ShareRecovery

/// `--hash`: how `sign`/`verify --mode ecdsa` turn the message file into the 32-byte digest that
/// ECDSA signs (docs/formats.md §12: the protocol never hashes it again).
enum MessageHash: String, CaseIterable, ExpressibleByArgument {
    /// Keccak-256, as Ethereum hashes a transaction's signing payload (the default).
    case keccak256
    /// SHA-256 of SHA-256, as Bitcoin hashes a sighash preimage.
    case sha256d
    /// The file is the digest itself: exactly 32 bytes.
    case none

    /// The digest of a message file's bytes.
    /// - Throws: a usage error (`invalidParameters`) for `none` with a file that is not 32 bytes.
    func digest(of message: [UInt8], file: String) throws -> [UInt8] {
        switch self {
        case .keccak256: return Keccak256.hash(message)
        case .sha256d: return SHA256.hash(SHA256.hash(message))
        case .none:
            guard message.count == 32 else {
                throw CLIError.usage(
                    ShareRecoveryError(
                        .invalidParameters,
                        "--hash none signs the bytes of \(file) as the digest itself, and a digest is 32 bytes; the file has \(message.count): give a file of exactly 32 raw bytes (not hex), or --hash keccak256 or sha256d to hash the message"
                    ))
            }
            return message
        }
    }
}

extension MessageHash {
    /// `--hash` in a FROST mode: BIP-340 and RFC 9591 hash the message inside the signature itself.
    static let frostRefusal =
        "--hash is for --mode ecdsa, which signs a 32-byte digest; bip340 and rfc9591 sign the message file itself (they hash it inside the signature)"
}
