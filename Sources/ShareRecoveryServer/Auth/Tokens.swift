import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP

/// A verified token's claims.
struct Token: Sendable {
    /// Random id; recorded in `spent_tokens` when a single-use write consumes the token.
    let id: String
    let userId: String
    let purpose: TokenPurpose
    /// Unix seconds.
    let expiresAt: Int64
}

/// Issues and verifies bearer tokens: `srt1.<hex payload>.<hex HMAC-SHA256 tag>`, the payload a compact JSON
/// object `{"tid","sub","pur","exp"}`, the tag over `srt1.<hex payload>` under a key derived from the master
/// key. Any server holding the master key verifies any other's tokens; no token state lives in memory.
/// During a master key rotation each master key derives a key: the first issues, every one verifies.
struct TokenAuthority: Sendable {
    static let prefix = "srt1"
    /// Longest token text accepted (anything longer is not ours).
    static let maximumLength = 2048
    /// The token keys, the issuing one first; never empty.
    private let keys: [SecureBytes]

    /// - Parameter keys: The token keys of the master keys, the issuing one first (at least one).
    init(keys: [SecureBytes]) {
        precondition(!keys.isEmpty, "a token authority needs a key")
        self.keys = keys
    }

    init(key: SecureBytes) { self.init(keys: [key]) }

    /// A new token and its text.
    func issue(userId: String, purpose: TokenPurpose, now: Int64, lifetime: Int64) -> (text: String, token: Token) {
        let token = Token(
            id: Hex.encode(SystemRandom().bytes(count: 16)), userId: userId, purpose: purpose, expiresAt: now + lifetime
        )
        let payload = JSONWriter.write(
            .object([
                ("tid", .string(token.id)), ("sub", .string(userId)), ("pur", .string(purpose.rawValue)),
                ("exp", .number(String(token.expiresAt))),
            ]))
        let signed = "\(Self.prefix).\(Hex.encode(Array(payload.utf8)))"
        return ("\(signed).\(Hex.encode(tag(Array(signed.utf8)[...], key: keys[0]).revealedBytes()))", token)
    }

    /// Checks the tag (constant time), the payload's shape and the expiry.
    /// - Throws: ``APIError`` 401 for anything that is not a valid, unexpired token of this server.
    func verify(_ text: String, now: Int64) throws(APIError) -> Token {
        let invalid = APIError.unauthorized("the bearer token is not valid")
        guard text.utf8.count <= Self.maximumLength else { throw invalid }
        // Split as bytes: a Character-wise split was the largest cost of serving a cipherText.
        let bytes = Array(text.utf8)
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].elementsEqual(Self.prefix.utf8),
            let payloadBytes = Hex.decode(String(decoding: parts[1], as: UTF8.self)),
            let tagBytes = Hex.decode(String(decoding: parts[2], as: UTF8.self))
        else { throw invalid }
        let offered = SecureBytes(copying: tagBytes)
        // SecureBytes == is constant time, and every key is tried, so the timing names no key.
        var matched = false
        for key in keys where tag(bytes[..<parts[1].endIndex], key: key) == offered { matched = true }
        guard matched else { throw invalid }
        // The tag is ours, so the payload is too; still parse it strictly.
        guard let payload = try? StrictJSON.parse(payloadBytes), case .object(let members) = payload,
            members.count == 4,
            case .string(let id)? = payload["tid"],
            case .string(let userId)? = payload["sub"],
            case .string(let purposeName)? = payload["pur"],
            let purpose = TokenPurpose(rawValue: purposeName),
            case .number(let expiryText)? = payload["exp"],
            let expiresAt = Int64(expiryText)
        else { throw invalid }
        guard now < expiresAt else { throw APIError.unauthorized("the bearer token has expired") }
        return Token(id: id, userId: userId, purpose: purpose, expiresAt: expiresAt)
    }

    private func tag(_ signed: ArraySlice<UInt8>, key: SecureBytes) -> SecureBytes {
        HMACSHA256.authenticate(signed, key: key)
    }
}
