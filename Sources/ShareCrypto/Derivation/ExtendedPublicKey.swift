/// A BIP-32 extended public key on secp256k1 (an "xpub"): a public key, a chain code and where the
/// key sits in its tree. Non-hardened children derive from it alone (CKDpub); hardened ones need a
/// private key and are not offered.
///
/// A threshold wallet has no private key anywhere, so its root is BIP-328's synthetic xpub of the
/// wallet key (``init(aggregateKey:)``): depth 0, parent fingerprint 0, child number 0 and BIP-328's
/// fixed chain code. Any BIP-32 wallet can watch it; the signers compute the same tweaks to sign for
/// a child.
public struct ExtendedPublicKey: Sendable, Equatable, CustomStringConvertible {
    /// The BIP-32 version bytes of a mainnet public key, which make the string start with `xpub`.
    public static let mainnetVersion: [UInt8] = [0x04, 0x88, 0xB2, 0x1E]
    /// The first index of BIP-32's hardened range (2^31).
    public static let hardenedOffset: UInt32 = 0x8000_0000
    /// BIP-328's chain code for a synthetic xpub of an aggregate key: SHA-256 of the text
    /// `MuSig2MuSig2MuSig2` (bip-0328.mediawiki, "Specification").
    public static let aggregateKeyChainCode: [UInt8] = Hex.decode(
        "868087ca02a6f974c4598924c36b57762d32cb45717167e300622c7167e38965")!

    /// The key.
    public let publicKey: Point
    /// The 32-byte chain code.
    public let chainCode: [UInt8]
    /// How many derivations from the root (0 for the root).
    public let depth: UInt8
    /// The first four bytes of HASH160 of the parent's compressed key; zero for the root.
    public let parentFingerprint: [UInt8]
    /// The index this key was derived at; zero for the root.
    public let childNumber: UInt32

    /// An extended key from its fields.
    /// - Parameters:
    ///   - publicKey: A secp256k1 point.
    ///   - chainCode: 32 bytes.
    ///   - depth: The depth (0 for a root).
    ///   - parentFingerprint: 4 bytes (zero for a root).
    ///   - childNumber: The index (zero for a root).
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 key;
    ///   ``ShareCryptoError/Code/invalidLength`` for a chain code or fingerprint of the wrong size;
    ///   ``ShareCryptoError/Code/invalidEncoding`` for a root (depth 0) with a non-zero fingerprint or child number.
    public init(
        publicKey: Point, chainCode: [UInt8], depth: UInt8 = 0, parentFingerprint: [UInt8] = [0, 0, 0, 0],
        childNumber: UInt32 = 0
    ) throws {
        guard publicKey.curve == .secp256k1 else {
            throw ShareCryptoError(
                .invalidParameters, "BIP-32 extended keys are secp256k1 keys; this key is on \(publicKey.curve)")
        }
        guard chainCode.count == 32 else {
            throw ShareCryptoError(.invalidLength, "a chain code is 32 bytes, got \(chainCode.count)")
        }
        guard parentFingerprint.count == 4 else {
            throw ShareCryptoError(.invalidLength, "a parent fingerprint is 4 bytes, got \(parentFingerprint.count)")
        }
        // BIP-32 test vector 5 refuses these: a root has no parent and no index.
        guard depth > 0 || (parentFingerprint == [0, 0, 0, 0] && childNumber == 0) else {
            throw ShareCryptoError(.invalidEncoding, "a depth-0 key has a zero parent fingerprint and child number")
        }
        self.publicKey = publicKey
        self.chainCode = chainCode
        self.depth = depth
        self.parentFingerprint = parentFingerprint
        self.childNumber = childNumber
    }

    /// BIP-328's synthetic xpub of an aggregate (here: threshold) public key: depth 0, parent
    /// fingerprint 0, child number 0, chain code ``aggregateKeyChainCode``.
    /// - Parameter aggregateKey: The secp256k1 key.
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for an ed25519 key.
    public init(aggregateKey: Point) throws {
        try self.init(publicKey: aggregateKey, chainCode: Self.aggregateKeyChainCode)
    }

    /// Parses an `xpub…` string.
    /// - Parameter serialized: Base58Check of the 78-byte BIP-32 serialization with the mainnet public version.
    /// - Throws: ``ShareCryptoError/Code/invalidEncoding`` for a bad string, checksum, length or
    ///   version (an `xprv`, a testnet key) or a root with a parent; ``ShareCryptoError/Code/invalidPoint``
    ///   for key bytes that are not a compressed secp256k1 point.
    public init(serialized: String) throws {
        let bytes = try Base58Check.decode(serialized)
        guard bytes.count == 78 else {
            throw ShareCryptoError(.invalidEncoding, "an extended key is 78 bytes, this one \(bytes.count)")
        }
        guard Array(bytes[0..<4]) == Self.mainnetVersion else {
            throw ShareCryptoError(
                .invalidEncoding,
                "version \(Hex.encode(bytes[0..<4])) is not a mainnet extended public key (0488b21e, xpub…); private and testnet keys are refused"
            )
        }
        let key = Array(bytes[45..<78])
        guard key[0] == 0x02 || key[0] == 0x03 else {
            throw ShareCryptoError(
                .invalidPoint,
                "an xpub's key is a compressed point (prefix 02 or 03), this one starts with \(Hex.encode([key[0]]))")
        }
        try self.init(
            publicKey: Point(rawRepresentation: key, curve: .secp256k1), chainCode: Array(bytes[13..<45]),
            depth: bytes[4],
            parentFingerprint: Array(bytes[5..<9]),
            childNumber: bytes[9..<13].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// The 78-byte BIP-32 serialization: version, depth, parent fingerprint, child number, chain code, key.
    public var rawRepresentation: [UInt8] {
        Self.mainnetVersion + [depth] + parentFingerprint + Self.bigEndian(childNumber) + chainCode
            + publicKey.rawRepresentation
    }

    /// The `xpub…` string.
    public var serialized: String { Base58Check.encode(rawRepresentation) }

    /// This key's fingerprint: the first four bytes of HASH160 of its compressed key.
    /// - Throws: As ``Hash160/hash(_:)``.
    public func fingerprint() throws -> [UInt8] {
        Array(try Hash160.hash(publicKey.rawRepresentation).prefix(4))
    }

    /// BIP-32's CKDpub: `I = HMAC-SHA512(c, ser_P(K) || ser_32(i))`, child key `I_L·G + K`, chain code `I_R`.
    /// - Parameter index: A non-hardened index, below 2^31.
    /// - Returns: The child and its tweak `I_L` (what a FROST signer adds, as a plain tweak, to sign for the child).
    /// - Throws: ``ShareCryptoError/Code/invalidParameters`` for a hardened index or a key at depth 255;
    ///   ``ShareCryptoError/Code/invalidChildIndex`` when `I_L ≥ n` or the child is the identity
    ///   (BIP-32: use the next index).
    public func child(at index: UInt32) throws -> (key: ExtendedPublicKey, tweak: Scalar) {
        guard index < Self.hardenedOffset else {
            throw ShareCryptoError(
                .invalidParameters,
                "index \(index) is hardened (≥ 2^31): an extended public key derives non-hardened children only")
        }
        guard depth < UInt8.max else {
            throw ShareCryptoError(.invalidParameters, "a BIP-32 key is at most 255 derivations deep")
        }
        let i = HMACSHA512.authenticationCode(
            key: chainCode, message: publicKey.rawRepresentation + Self.bigEndian(index))
        let tweak: Scalar
        do {
            tweak = try Scalar(rawRepresentation: i[0..<32], curve: .secp256k1)
        } catch {
            throw ShareCryptoError(
                .invalidChildIndex, "child \(index) is invalid under BIP-32 (I_L ≥ n); use the next index")
        }
        guard let key = Point.sumAllowingIdentity([publicKey, Point.generatorTimesAllowingIdentity(tweak)]) else {
            throw ShareCryptoError(
                .invalidChildIndex, "child \(index) is invalid under BIP-32 (the identity); use the next index")
        }
        let child = try ExtendedPublicKey(
            publicKey: key, chainCode: Array(i[32..<64]), depth: depth + 1, parentFingerprint: fingerprint(),
            childNumber: index)
        return (child, tweak)
    }

    public var description: String { serialized }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
