/// The one error type of `ShareCrypto`.
///
/// Errors compare equal by ``code`` alone, so tests and callers can match on the stable code
/// while the ``reason`` stays free to explain. A reason never contains secret bytes.
public struct ShareCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable error code. Codes may be added; existing ones never change meaning.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        // A private enum behind a struct lets us add codes without breaking exhaustive switches.
        private enum Backing: String, Sendable {
            case invalidScalar, invalidPoint, invalidLength, authenticationFailed
            case invalidKdfParameters, invalidKeyMaterial, emptySecret, unsealFailed
            case invalidKey, invalidParameters, randomSourceFailure, backendFailure
            case invalidShare, publicKeyMismatch, subShareCheckFailed, dkgProofFailed
            case invalidSignatureShare, nonceReused
            case invalidEncoding, invalidChildIndex
            case ecdsaCheckFailed, pairSetupStale, ecdsaRestart
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// A scalar is not canonical (≥ the group order), or is zero where a secret is required.
        public static let invalidScalar = Code(.invalidScalar)
        /// A point does not decode, is the identity, is off the curve, is not canonical, or is not of prime order.
        public static let invalidPoint = Code(.invalidPoint)
        /// An input has the wrong number of bytes.
        public static let invalidLength = Code(.invalidLength)
        /// An AEAD tag did not verify: a wrong key or a tampered byte, deliberately indistinguishable.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// Argon2id parameters outside the accepted bounds.
        public static let invalidKdfParameters = Code(.invalidKdfParameters)
        /// HKDF key material that is not 32 bytes.
        public static let invalidKeyMaterial = Code(.invalidKeyMaterial)
        /// An empty password or recovery code.
        public static let emptySecret = Code(.emptySecret)
        /// A sealed box that does not open with the given key.
        public static let unsealFailed = Code(.unsealFailed)
        /// A key (X25519) of the wrong size or otherwise unusable.
        public static let invalidKey = Code(.invalidKey)
        /// Arguments that do not describe a valid computation (e.g. duplicate Lagrange indices).
        public static let invalidParameters = Code(.invalidParameters)
        /// The random source could not produce bytes.
        public static let randomSourceFailure = Code(.randomSourceFailure)
        /// The C backend failed in a way no input should cause (e.g. out of memory).
        public static let backendFailure = Code(.backendFailure)
        /// A secret share does not match its public share: `x_i·G ≠ X_i` (docs/formats.md §2).
        public static let invalidShare = Code(.invalidShare)
        /// Key material that does not reproduce the group public key it claims (docs/formats.md §3 step 5, §11).
        public static let publicKeyMismatch = Code(.publicKeyMismatch)
        /// A received sub-share fails its Feldman check against the sender's commitments (docs/formats.md §10 step 3).
        public static let subShareCheckFailed = Code(.subShareCheckFailed)
        /// A DKG proof of knowledge does not verify (docs/formats.md §10 step 3).
        public static let dkgProofFailed = Code(.dkgProofFailed)
        /// A partial signature or a signer's nonce commitment does not verify (docs/formats.md §11).
        public static let invalidSignatureShare = Code(.invalidSignatureShare)
        /// A single-use signing nonce was asked to sign a second time (docs/formats.md §11).
        public static let nonceReused = Code(.nonceReused)
        /// A Base58Check string or a BIP-32 extended key that does not decode: a character outside the
        /// alphabet, a wrong checksum, length or version, or fields that contradict each other.
        public static let invalidEncoding = Code(.invalidEncoding)
        /// BIP-32: this child index of this key gives no valid child (I_L ≥ n, or the child is the
        /// identity; probability below 2^-127). BIP-32 says to proceed with the next index.
        public static let invalidChildIndex = Code(.invalidChildIndex)
        /// A threshold ECDSA consistency check failed (docs/formats.md §12): the signature is aborted,
        /// and the pair setup with the named party must be discarded and made again before signing.
        public static let ecdsaCheckFailed = Code(.ecdsaCheckFailed)
        /// An ECDSA pair setup is older than a party's current share (another set or generation):
        /// make a fresh pair setup with the current shares (docs/formats.md §12).
        public static let pairSetupStale = Code(.pairSetupStale)
        /// A threshold ECDSA session's nonce point has x(R) ≥ n (odds about 2^-128): nothing failed and
        /// the pair setups stay valid; sign again in a new session with fresh seeds.
        public static let ecdsaRestart = Code(.ecdsaRestart)

        public var description: String { backing.rawValue }
    }

    /// The stable code.
    public let code: Code
    /// A human explanation. Never contains secret bytes.
    public let reason: String
    /// Where the error was raised, for diagnostics.
    public let location: String
    /// The party index (docs/formats.md §1) whose contribution caused the error, when one is to blame.
    public let party: Int?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - reason: A human explanation without secret bytes.
    ///   - party: The party index to blame, if any.
    ///   - file: Where it was raised (the caller's file, by default).
    ///   - line: Where it was raised (the caller's line, by default).
    public init(_ code: Code, _ reason: String, party: Int? = nil, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.reason = reason
        self.party = party
        self.location = "\(file):\(line)"
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    public var description: String {
        if let party { return "\(code) (party \(party)): \(reason)" }
        return "\(code): \(reason)"
    }
}
