import ShareCrypto
import ShareRecovery

/// What one anchor row (`audit_anchors`) commits to: the heads of the account chains that moved since
/// the previous anchor, and, in the first anchor only, the head of the chain written before the
/// per-account chains. Anchors form a chain of their own, so the heads of every chain at the time of
/// the newest anchor follow from the anchors together (docs/server.md, "The hash chains").
///
/// Stored as the anchor's `heads` text, JSON:
/// `{"legacy"?: {"sequence", "hash"}, "chains": [{"account", "position", "hash"}]}`, hashes as
/// lower-case hex. The anchor's hash is `SHA-256(previous anchor's hash ‖ "SRAN" ‖ 0x01 ‖ at ‖ heads)`
/// with `at` and `heads` encoded as a row's fields are (``AuditChain``); the first anchor's previous
/// hash is 32 zero bytes.
package struct AuditAnchorRecord: Sendable, Equatable {
    /// One chain's head: its newest row's position and hash.
    package struct Head: Sendable, Equatable {
        package let account: String
        package let position: Int64
        package let hash: [UInt8]
    }

    /// The newest row (sequence and hash) of the chain written before the per-account chains.
    package var legacy: AuditAnchor?
    package var chains: [Head]

    /// The most chain heads one anchor carries; more moved chains take several anchors.
    static let maximumChains = 1_000
    static let magic = Array("SRAN".utf8) + [0x01]

    package init(legacy: AuditAnchor?, chains: [Head]) {
        self.legacy = legacy
        self.chains = chains
    }

    /// The stored text.
    var text: String {
        var members: [(key: String, value: JSONValue)] = []
        if let legacy {
            members.append(
                (
                    "legacy",
                    .object([
                        ("sequence", .number(String(legacy.sequence))), ("hash", .string(Hex.encode(legacy.hash))),
                    ])
                )
            )
        }
        members.append(
            (
                "chains",
                .array(
                    chains.map {
                        .object([
                            ("account", .string($0.account)), ("position", .number(String($0.position))),
                            ("hash", .string(Hex.encode($0.hash))),
                        ])
                    })
            ))
        return JSONWriter.write(.object(members))
    }

    /// Reads a stored text; `nil` when it is not one (an anchor edited without its hash fails the hash
    /// first, so this refuses only a text rewritten together with a recomputed hash).
    init?(text: String) {
        guard let value = try? StrictJSON.parse(Array(text.utf8), maximumSize: Int.max),
            case .array(let chains)? = value["chains"]
        else { return nil }
        func hash(_ value: JSONValue?) -> [UInt8]? {
            guard case .string(let hex)? = value, let bytes = Hex.decode(hex), bytes.count == SHA256.outputCount
            else { return nil }
            return bytes
        }
        func number(_ value: JSONValue?) -> Int64? {
            guard case .number(let text)? = value else { return nil }
            return Int64(text)
        }
        if let legacy = value["legacy"] {
            guard let sequence = number(legacy["sequence"]), let bytes = hash(legacy["hash"]) else { return nil }
            self.legacy = AuditAnchor(sequence: sequence, hash: bytes)
        }
        var heads: [Head] = []
        for chain in chains {
            guard case .string(let account)? = chain["account"], let position = number(chain["position"]),
                let bytes = hash(chain["hash"])
            else { return nil }
            heads.append(Head(account: account, position: position, hash: bytes))
        }
        self.chains = heads
    }

    /// The hash of an anchor row with this `at` and `heads` text after an anchor hashing to `previous`.
    static func hash(previous: [UInt8], at: Int64, heads: String) -> [UInt8] {
        AuditChain.link(previous: previous, encoding: AuditChain.encoding(magic: magic, at: at, texts: [heads]))
    }

    /// The hash a stored anchor should carry (an anchor read as an ``AuditRow``: its heads in `detail`).
    static func expectedHash(of row: AuditRow) -> [UInt8] {
        hash(previous: row.previousHash, at: row.at, heads: row.detail)
    }
}
