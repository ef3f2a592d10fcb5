import ShareCrypto

/// One row of `audit_events` as stored, read back without interpretation (a row that was edited may
/// hold anything, and the verifier must still be able to say so).
package struct AuditRow: Sendable, Equatable {
    /// Position in the chain: 1, 2, 3, … with no gap. An index for reading; the order itself is
    /// protected by the hash links, not by this number.
    package let sequence: Int64
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
        previousHash: [UInt8], hash: [UInt8]
    ) {
        self.sequence = sequence
        self.at = at
        self.account = account
        self.event = event
        self.requestId = requestId
        self.detail = detail
        self.previousHash = previousHash
        self.hash = hash
    }
}

/// The hash chain of the audit trail: one global chain over every account's rows, so deleting any row
/// but the newest breaks a link, and a verifier holding an earlier head (an anchor) also notices the
/// newest rows going.
///
/// `hash = SHA-256(previous row's hash ‖ encoding)`, where the first row's previous hash is 32 zero
/// bytes and `encoding` is `"SRAU" ‖ 0x01 ‖ at (8 bytes, big-endian two's complement) ‖ account ‖ event ‖
/// requestId ‖ detail`, each text as its UTF-8 bytes after a 4-byte big-endian length. The lengths
/// make the encoding injective: no two rows encode alike.
package enum AuditChain {
    /// The previous hash of the first row.
    package static let genesis = [UInt8](repeating: 0, count: SHA256.outputCount)
    static let magic = Array("SRAU".utf8) + [0x01]

    /// The canonical bytes of a row's fields.
    static func encoding(at: Int64, account: String, event: String, requestId: String, detail: String) -> [UInt8] {
        var bytes = magic
        let time = UInt64(bitPattern: at)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: time >> UInt64(shift)))
        }
        for text in [account, event, requestId, detail] {
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

/// Why `audit verify` refuses a chain: the first broken row, by sequence, and what is wrong with it.
package struct AuditChainError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code.
    package enum Code: String, Sendable {
        /// The row's hash does not match its own fields: it was edited after it was written.
        case rowEdited
        /// Sequence numbers are missing before this row: rows were deleted.
        case rowsMissing
        /// The row's previous hash is that of another stored row: rows were moved.
        case rowsReordered
        /// The row's previous hash is that of no stored row: its predecessor was deleted (and the later
        /// rows renumbered to hide the gap), or edited and given a recomputed hash.
        case brokenLink
        /// An anchor (a sequence and hash recorded earlier) does not match: the chain lost its newest
        /// rows, or was rewritten from the anchored row on.
        case anchorMismatch
        /// The database has no audit trail: not a share-recovery server database, or one older than the
        /// migration that adds it (start a current server on it once).
        case noAuditTrail
    }

    package let code: Code
    /// The first row concerned (for `rowsMissing`, the first missing sequence number).
    package let sequence: Int64
    /// What is wrong, naming the row; never a row's contents.
    package let reason: String

    package init(_ code: Code, sequence: Int64, _ reason: String) {
        self.code = code
        self.sequence = sequence
        self.reason = reason
    }

    package static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code && lhs.sequence == rhs.sequence }

    package var description: String { "\(code.rawValue): \(reason)" }
}

/// A sequence and hash recorded from an earlier `audit verify` (its `head`), kept outside the database:
/// a later verification checks that the chain still holds that row, with that hash.
package struct AuditAnchor: Sendable, Equatable {
    package let sequence: Int64
    package let hash: [UInt8]

    /// Parses `<sequence>:<64 hex digits>`; `nil` when malformed.
    package init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let sequence = Int64(parts[0]), sequence >= 1, parts[1].utf8.count == 64,
            let hash = Hex.decode(String(parts[1]).lowercased())
        else { return nil }
        self.sequence = sequence
        self.hash = hash
    }

    package init(sequence: Int64, hash: [UInt8]) {
        self.sequence = sequence
        self.hash = hash
    }
}

/// The walk of `audit verify`, one row at a time in sequence order: each row's own hash, the sequence
/// without gaps, the link to the row before, and the anchors on the way.
package struct AuditChainWalk: Sendable {
    /// What a row did to the walk.
    package enum Step: Sendable, Equatable {
        case intact
        case broken(AuditChainError)
        /// The row's previous hash is not the hash of the row before it; whether it names another row
        /// (`rowsReordered`) or none (`brokenLink`) takes a look-up the caller makes.
        case linkMismatch(sequence: Int64, previousHash: [UInt8])
    }

    package private(set) var count: Int64 = 0
    package private(set) var head: AuditAnchor?
    private var anchors: [Int64: [UInt8]]

    package init(anchors: [AuditAnchor] = []) {
        self.anchors = Dictionary(anchors.map { ($0.sequence, $0.hash) }) { first, _ in first }
    }

    package mutating func check(_ row: AuditRow) -> Step {
        let expectedSequence = (head?.sequence ?? 0) + 1
        guard row.previousHash.count == SHA256.outputCount, row.hash.count == SHA256.outputCount,
            AuditChain.expectedHash(of: row) == row.hash
        else {
            return .broken(
                AuditChainError(
                    .rowEdited, sequence: row.sequence,
                    "row \(row.sequence) does not match its hash: it was edited after it was written"))
        }
        guard row.sequence == expectedSequence else {
            let range =
                row.sequence - 1 == expectedSequence
                ? "row \(expectedSequence) is" : "rows \(expectedSequence)…\(row.sequence - 1) are"
            return .broken(
                AuditChainError(
                    .rowsMissing, sequence: expectedSequence, "\(range) missing (deleted) before row \(row.sequence)"))
        }
        guard row.previousHash == (head?.hash ?? AuditChain.genesis) else {
            return .linkMismatch(sequence: row.sequence, previousHash: row.previousHash)
        }
        if let anchored = anchors.removeValue(forKey: row.sequence), anchored != row.hash {
            return .broken(
                AuditChainError(
                    .anchorMismatch, sequence: row.sequence,
                    "row \(row.sequence)'s hash is not the anchored one: the chain was rewritten from row \(row.sequence) on (or earlier)"
                ))
        }
        count += 1
        head = AuditAnchor(sequence: row.sequence, hash: row.hash)
        return .intact
    }

    /// After the last row: an anchor beyond the end means the newest rows were deleted.
    package func finish() -> AuditChainError? {
        guard let missing = anchors.keys.min() else { return nil }
        let end = head.map { "row \($0.sequence)" } ?? "no row"
        return AuditChainError(
            .anchorMismatch, sequence: missing,
            "the chain ends at \(end), but row \(missing) was anchored: the newest rows were deleted")
    }

    /// The error for a link mismatch, given the sequence of the row whose hash the previous hash is (if any).
    package static func linkError(sequence: Int64, namedRow: Int64?) -> AuditChainError {
        if let namedRow {
            return AuditChainError(
                .rowsReordered, sequence: sequence,
                "row \(sequence) follows row \(namedRow) in the chain, not row \(sequence - 1): rows were reordered")
        }
        if sequence == 1 {
            return AuditChainError(
                .brokenLink, sequence: 1,
                "row 1 is not the first row of the chain: the first rows were deleted and the rest renumbered")
        }
        return AuditChainError(
            .brokenLink, sequence: sequence,
            "row \(sequence) does not follow row \(sequence - 1): a row before it was deleted and the rest renumbered, or row \(sequence - 1) was edited and its hash recomputed"
        )
    }
}
