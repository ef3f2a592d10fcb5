import ShareCrypto
import ShareRecovery

/// One row of `audit_events` (or of `audit_anchors`, read alike) as stored, read back without
/// interpretation (a row that was edited may hold anything, and the verifier must still be able to say so).
package struct AuditRow: Sendable, Equatable {
    /// The row's place among all rows: increasing, unique, with gaps since the per-account chains
    /// (a rolled-back append leaves one on PostgreSQL). The rows of the single chain written before
    /// them are numbered 1, 2, 3, … with no gap. An index for reading and listing; the order itself is
    /// protected by the hash links, not by this number.
    package let sequence: Int64
    /// The row's place in its account's chain, 1, 2, 3, … with no gap; `nil` for a row of the single
    /// chain written before the per-account chains (docs/server.md, "The hash chains").
    package let position: Int64?
    package let at: Int64
    package let account: String
    package let event: String
    package let requestId: String
    /// The event's public details, as JSON text.
    package let detail: String
    package let previousHash: [UInt8]
    package let hash: [UInt8]

    package init(
        sequence: Int64, at: Int64, account: String, event: String, requestId: String, detail: String,
        previousHash: [UInt8], hash: [UInt8], position: Int64? = nil
    ) {
        self.sequence = sequence
        self.position = position
        self.at = at
        self.account = account
        self.event = event
        self.requestId = requestId
        self.detail = detail
        self.previousHash = previousHash
        self.hash = hash
    }
}

/// The hash chains of the audit trail: one per account (server events without an account have the
/// account `""`, a chain like any other), each row linking to its account's previous row, so that
/// appends of different accounts never wait on one another; and the chain of anchors
/// (AuditAnchorRecord.swift), which commits to every chain's head now and then. The rows written
/// before the per-account chains form one chain over every account, verified as it was written.
///
/// `hash = SHA-256(previous row's hash ‖ encoding)`, where a chain's first row's previous hash is 32
/// zero bytes and `encoding` is `"SRAU" ‖ 0x01 ‖ at (8 bytes, big-endian two's complement) ‖ account ‖ event ‖
/// requestId ‖ detail`, each text as its UTF-8 bytes after a 4-byte big-endian length. The lengths
/// make the encoding injective: no two rows encode alike.
package enum AuditChain {
    /// The previous hash of the first row.
    package static let genesis = [UInt8](repeating: 0, count: SHA256.outputCount)
    static let magic = Array("SRAU".utf8) + [0x01]

    /// The canonical bytes of a row's fields.
    static func encoding(at: Int64, account: String, event: String, requestId: String, detail: String) -> [UInt8] {
        encoding(magic: magic, at: at, texts: [account, event, requestId, detail])
    }

    /// `magic ‖ at (8 bytes, big-endian two's complement) ‖ each text as a 4-byte big-endian length and
    /// its UTF-8 bytes`: the shape of both a row's and an anchor's encoding.
    static func encoding(magic: [UInt8], at: Int64, texts: [String]) -> [UInt8] {
        var bytes = magic
        let time = UInt64(bitPattern: at)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: time >> UInt64(shift)))
        }
        for text in texts {
            let utf8 = Array(text.utf8)
            let count = UInt32(utf8.count)
            bytes += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            bytes += utf8
        }
        return bytes
    }

    /// The hash of a row with these fields after a row hashing to `previous`.
    static func hash(previous: [UInt8], at: Int64, account: String, event: String, requestId: String, detail: String)
        -> [UInt8]
    {
        link(
            previous: previous,
            encoding: encoding(at: at, account: account, event: event, requestId: requestId, detail: detail))
    }

    /// The hash of a row from its previous hash and its ``encoding(at:account:event:requestId:detail:)``
    /// (PostgreSQL's trigger computes the same with `sha256(previous || encoding)`).
    static func link(previous: [UInt8], encoding: [UInt8]) -> [UInt8] { SHA256.hash(previous + encoding) }

    /// The hash a stored row should carry, from its own fields and previous hash.
    static func expectedHash(of row: AuditRow) -> [UInt8] {
        hash(
            previous: row.previousHash, at: row.at, account: row.account, event: row.event, requestId: row.requestId,
            detail: row.detail)
    }
}

/// Which chain of the audit trail a row or an error belongs to.
package enum AuditChainName: Sendable, Hashable, CustomStringConvertible {
    /// The single chain over every account written before the per-account chains (numbered by sequence).
    case legacy
    /// One account's chain (`""`: the server's own events), numbered by position.
    case account(String)
    /// The chain of anchors, numbered by anchor sequence.
    case anchors

    /// How a reason names row `number` of this chain.
    func row(_ number: Int64) -> String {
        switch self {
        case .legacy: "row \(number)"
        case .account(let account): "row \(number) of account \(Self.quoted(account))'s chain"
        case .anchors: "anchor \(number)"
        }
    }

    /// How a reason names rows `first…last`.
    func rows(_ first: Int64, _ last: Int64) -> String {
        guard first != last else { return row(first) }
        switch self {
        case .legacy: return "rows \(first)…\(last)"
        case .account(let account): return "rows \(first)…\(last) of account \(Self.quoted(account))'s chain"
        case .anchors: return "anchors \(first)…\(last)"
        }
    }

    package var description: String {
        switch self {
        case .legacy: "the chain before the per-account chains"
        case .account(let account): "account \(Self.quoted(account))'s chain"
        case .anchors: "the anchors"
        }
    }

    /// An account id as a reason shows it: JSON-quoted, so that the empty (server) account and odd
    /// bytes stay readable.
    static func quoted(_ account: String) -> String {
        account.isEmpty ? "\"\" (the server's events)" : JSONWriter.write(.string(account))
    }
}

/// Why `audit verify` refuses the trail: the first broken row found, its chain, and what is wrong with it.
package struct AuditChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    package enum Code: String, Sendable {
        /// The row's hash does not match its own fields: it was edited after it was written.
        case rowEdited
        /// Numbers are missing before this row in its chain: rows were deleted.
        case rowsMissing
        /// The row's previous hash is that of another stored row of its chain: rows were moved.
        case rowsReordered
        /// The row's previous hash is that of no stored row: its predecessor was deleted (and the later
        /// rows renumbered to hide the gap), or edited and given a recomputed hash.
        case brokenLink
        /// An anchor (one of the database's anchor rows, or one recorded earlier and passed with
        /// `--anchor`) does not match: a chain lost its newest rows, or was rewritten from the anchored
        /// row on.
        case anchorMismatch
        /// An account's chain (or the anchors) does not end where its head record (`audit_chain_heads`,
        /// `audit_anchor_head`) says: its newest rows, written since the last anchor (or the newest
        /// anchors), were deleted, or the head record was edited.
        case headMismatch
        /// The database has no audit trail: not a share-recovery server database, or one older than the
        /// migration that adds it (start a current server on it once).
        case noAuditTrail
    }

    package let code: Code
    /// The chain concerned.
    package let chain: AuditChainName
    /// The first row concerned, by its number in `chain` (for `rowsMissing`, the first missing one).
    package let sequence: Int64
    /// What is wrong, naming the row; never a row's contents.
    package let reason: String

    package init(_ code: Code, chain: AuditChainName = .legacy, sequence: Int64, _ reason: String) {
        self.code = code
        self.chain = chain
        self.sequence = sequence
        self.reason = reason
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.chain == rhs.chain && lhs.sequence == rhs.sequence
    }

    package var description: String { "\(code.rawValue): \(reason)" }
}

/// A point recorded from an earlier `audit verify` (its `head`), kept outside the database: a later
/// verification checks that the trail still holds it, with that hash. Either an anchor row
/// (`anchor:<sequence>:<hash>`, what verify prints since the per-account chains) or a row of the
/// chain written before them (`<sequence>:<hash>`, what earlier releases printed).
package struct AuditAnchor: Sendable, Equatable {
    package let chain: AuditChainName
    package let sequence: Int64
    package let hash: [UInt8]

    /// Parses `anchor:<sequence>:<64 hex digits>` or `<sequence>:<64 hex digits>`; `nil` when malformed.
    package init?(_ text: String) {
        var parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var chain = AuditChainName.legacy
        if parts.count == 3, parts[0] == "anchor" {
            chain = .anchors
            parts.removeFirst()
        }
        guard parts.count == 2, let sequence = Int64(parts[0]), sequence >= 1, parts[1].utf8.count == 64,
            let hash = Hex.decode(String(parts[1]).lowercased())
        else { return nil }
        self.chain = chain
        self.sequence = sequence
        self.hash = hash
    }

    package init(chain: AuditChainName = .legacy, sequence: Int64, hash: [UInt8]) {
        self.chain = chain
        self.sequence = sequence
        self.hash = hash
    }

    /// The text `init?(_:)` parses.
    package var text: String {
        (chain == .anchors ? "anchor:" : "") + "\(sequence):\(Hex.encode(hash))"
    }
}

/// The walk of one chain, one row at a time in order: each row's own hash, the numbering without
/// gaps, the link to the row before, and the anchors on the way.
package struct AuditChainWalk: Sendable {
    /// What a row did to the walk.
    package enum Step: Sendable, Equatable {
        case intact
        case broken(AuditChainError)
        /// The row's previous hash is not the hash of the row before it; whether it names another row
        /// (`rowsReordered`) or none (`brokenLink`) takes a look-up the caller makes.
        case linkMismatch(sequence: Int64, previousHash: [UInt8])
    }

    package let chain: AuditChainName
    package private(set) var count: Int64 = 0
    package private(set) var head: AuditAnchor?
    /// The anchored hashes by row number (an anchor row and an operator's may both name one row).
    private var anchors: [Int64: [[UInt8]]]
    private let expectedHash: @Sendable (AuditRow) -> [UInt8]

    /// - Parameters:
    ///   - chain: The chain walked: a row's number is its `position` in an account's chain, else its `sequence`.
    ///   - anchors: Rows of this chain that must be met, with these hashes.
    ///   - expectedHash: The hash a row should carry (rows and anchors encode differently).
    package init(
        chain: AuditChainName = .legacy, anchors: [AuditAnchor] = [],
        expectedHash: @escaping @Sendable (AuditRow) -> [UInt8] = AuditChain.expectedHash(of:)
    ) {
        self.chain = chain
        self.anchors = Dictionary(grouping: anchors, by: \.sequence).mapValues { $0.map(\.hash) }
        self.expectedHash = expectedHash
    }

    /// A row's number in this chain.
    func number(of row: AuditRow) -> Int64 {
        if case .account = chain { return row.position ?? 0 }
        return row.sequence
    }

    package mutating func check(_ row: AuditRow) -> Step {
        let number = number(of: row)
        let expected = (head?.sequence ?? 0) + 1
        guard row.previousHash.count == SHA256.outputCount, row.hash.count == SHA256.outputCount,
            expectedHash(row) == row.hash
        else {
            return .broken(
                AuditChainError(
                    .rowEdited, chain: chain, sequence: number,
                    "\(chain.row(number)) does not match its hash: it was edited after it was written"))
        }
        guard number == expected else {
            let verb = number - 1 == expected ? "is" : "are"
            return .broken(
                AuditChainError(
                    .rowsMissing, chain: chain, sequence: expected,
                    "\(chain.rows(expected, number - 1)) \(verb) missing (deleted) before \(chain.row(number))"))
        }
        guard row.previousHash == (head?.hash ?? AuditChain.genesis) else {
            return .linkMismatch(sequence: number, previousHash: row.previousHash)
        }
        if let anchored = anchors.removeValue(forKey: number), anchored.contains(where: { $0 != row.hash }) {
            return .broken(
                AuditChainError(
                    .anchorMismatch, chain: chain, sequence: number,
                    "\(chain.row(number))'s hash is not the anchored one: the chain was rewritten from \(chain.row(number)) on (or earlier)"
                ))
        }
        count += 1
        head = AuditAnchor(chain: chain, sequence: number, hash: row.hash)
        return .intact
    }

    /// After the last row: an anchor beyond the end means the newest rows were deleted.
    package func finish() -> AuditChainError? {
        guard let missing = anchors.keys.min() else { return nil }
        let end = head.map { chain.row($0.sequence) } ?? "no row"
        return AuditChainError(
            .anchorMismatch, chain: chain, sequence: missing,
            "\(chain) ends at \(end), but \(chain.row(missing)) was anchored: its newest rows were deleted")
    }

    /// The error for a link mismatch, given the number of the row whose hash the previous hash is (if any).
    package func linkError(sequence: Int64, namedRow: Int64?) -> AuditChainError {
        if let namedRow {
            return AuditChainError(
                .rowsReordered, chain: chain, sequence: sequence,
                "\(chain.row(sequence)) follows \(chain.row(namedRow)), not \(chain.row(sequence - 1)): rows were reordered"
            )
        }
        if sequence == 1 {
            return AuditChainError(
                .brokenLink, chain: chain, sequence: 1,
                "\(chain.row(1)) is not the first row of \(chain): the first rows were deleted and the rest renumbered")
        }
        return AuditChainError(
            .brokenLink, chain: chain, sequence: sequence,
            "\(chain.row(sequence)) does not follow \(chain.row(sequence - 1)): a row before it was deleted and the rest renumbered, or \(chain.row(sequence - 1)) was edited and its hash recomputed"
        )
    }
}
