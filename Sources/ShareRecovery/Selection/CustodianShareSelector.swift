public import ShareCrypto

/// What happened to one candidate during selection (docs/formats.md §7).
public struct CandidateReport: Sendable, Equatable, CustomStringConvertible {
    /// The verdict on a candidate.
    public enum Verdict: Sendable, Equatable {
        /// Chosen to complete the user's share.
        case selected
        /// Valid, but not needed (a duplicate index, or enough lower indices were chosen).
        case notNeeded
        /// Refused, with the error code and reason.
        case refused(ShareRecoveryError.Code, String)
    }

    /// The candidate's position in the input list.
    public let position: Int
    /// Its party index, when it parsed that far.
    public let partyIndex: Int?
    /// The verdict.
    public let verdict: Verdict

    public var description: String {
        let party = partyIndex.map { "party \($0)" } ?? "unparsed"
        switch verdict {
        case .selected: return "#\(position) (\(party)): selected"
        case .notNeeded: return "#\(position) (\(party)): valid, not needed"
        case .refused(let code, let reason): return "#\(position) (\(party)): \(code): \(reason)"
        }
    }
}

/// The outcome of a selection: a value, so the caller decides what a miss means.
public enum SelectionOutcome: Sendable {
    /// The custodian shares (t−1 of them, lowest indices first) that complete the user's share.
    case selected([ShareRecord], reports: [CandidateReport])
    /// Nothing survived the metadata filter (steps 1–3).
    case noMatchingShare(reports: [CandidateReport])
    /// Some candidates matched the metadata, but fewer than t−1 distinct indices were valid.
    case inconsistentShares(reports: [CandidateReport])

    /// Every candidate's report.
    public var reports: [CandidateReport] {
        switch self {
        case .selected(_, let reports), .noMatchingShare(let reports), .inconsistentShares(let reports): reports
        }
    }

    /// The selected shares, or a ``ShareRecoveryError`` whose reason lists every candidate.
    public func get() throws(ShareRecoveryError) -> [ShareRecord] {
        switch self {
        case .selected(let shares, _): return shares
        case .noMatchingShare(let reports):
            throw ShareRecoveryError(.noMatchingShare, Self.summary("no custodian share matches", reports))
        case .inconsistentShares(let reports):
            throw ShareRecoveryError(
                .inconsistentShares, Self.summary("matching custodian shares are not valid", reports))
        }
    }

    private static func summary(_ headline: String, _ reports: [CandidateReport]) -> String {
        reports.isEmpty
            ? "\(headline) (no candidates)" : "\(headline): " + reports.map(\.description).joined(separator: "; ")
    }
}

/// Chooses the custodian backup share(s) that complete a user backup share (docs/formats.md §7).
///
/// The work is ordered by cost: every candidate is parsed and filtered on metadata first (no curve
/// work, no unsealing); survivors are then unsealed and verified lowest index first, stopping as
/// soon as t−1 distinct indices are valid.
public struct CustodianShareSelector: Sendable {
    private let custodianKey: SealingKeyPair

    /// - Parameter custodianKey: The custodian's X25519 key pair that opens the sealed shares.
    public init(custodianKey: SealingKeyPair) {
        self.custodianKey = custodianKey
    }

    /// Selects among candidate JSON strings.
    /// - Parameters:
    ///   - userShare: The decrypted user backup share U.
    ///   - method: The backup method from U's cipherText header.
    ///   - candidates: The §6 JSON strings.
    /// - Returns: The outcome, with a report for every candidate.
    public func select(for userShare: ShareRecord, method: BackupMethod, candidates: [String]) -> SelectionOutcome {
        var reports = [CandidateReport?](repeating: nil, count: candidates.count)
        var survivors: [(position: Int, share: CustodianBackupShare)] = []
        let userCommitments = userShare.commitments.map(\.rawRepresentation)

        for (position, text) in candidates.enumerated() {
            let share: CustodianBackupShare
            do {
                share = try CustodianBackupShare(json: text)
            } catch {
                reports[position] = CandidateReport(
                    position: position, partyIndex: nil, verdict: .refused(error.code, error.reason))
                continue
            }
            if let mismatch = Self.metadataMismatch(
                share, userShare: userShare, method: method, userCommitments: userCommitments)
            {
                reports[position] = CandidateReport(
                    position: position, partyIndex: share.partyIndex, verdict: .refused(.noMatchingShare, mismatch))
                continue
            }
            guard share.partyIndex != userShare.partyIndex else {
                reports[position] = CandidateReport(
                    position: position, partyIndex: share.partyIndex,
                    verdict: .refused(.noMatchingShare, "same party index as the user share"))
                continue
            }
            survivors.append((position, share))
        }

        let needed = userShare.threshold - 1
        var chosen: [Int: ShareRecord] = [:]
        // Lowest index first, input order within an index, so the lowest indices win (§7 step 5).
        for (position, share) in survivors.sorted(by: {
            ($0.share.partyIndex, $0.position) < ($1.share.partyIndex, $1.position)
        }) {
            if chosen[share.partyIndex] != nil || chosen.count == needed {
                reports[position] = CandidateReport(
                    position: position, partyIndex: share.partyIndex, verdict: .notNeeded)
                continue
            }
            do {
                chosen[share.partyIndex] = try share.open(with: custodianKey, known: userShare)
                reports[position] = CandidateReport(
                    position: position, partyIndex: share.partyIndex, verdict: .selected)
            } catch {
                reports[position] = CandidateReport(
                    position: position, partyIndex: share.partyIndex, verdict: .refused(error.code, error.reason))
            }
        }

        let finalReports = reports.compactMap { $0 }
        if chosen.count == needed, needed > 0 {
            return .selected(chosen.keys.sorted().compactMap { chosen[$0] }, reports: finalReports)
        }
        return survivors.isEmpty ? .noMatchingShare(reports: finalReports) : .inconsistentShares(reports: finalReports)
    }

    /// Why a candidate's metadata rules it out (§7 step 2), or `nil` when it matches.
    private static func metadataMismatch(
        _ share: CustodianBackupShare, userShare: ShareRecord, method: BackupMethod, userCommitments: [[UInt8]]
    ) -> String? {
        if userShare.kind != .backup { return "the user share is not a backup share" }
        if share.walletId != userShare.walletId { return "other wallet" }
        if share.curve != userShare.curve { return "other curve" }
        if share.backupMethod != method { return "other backup method (\(share.backupMethod))" }
        if share.setId != userShare.setId { return "other set" }
        if share.generation != userShare.generation { return "other generation (\(share.generation))" }
        if share.threshold != userShare.threshold || share.parties != userShare.parties {
            return "other threshold or parties"
        }
        if share.commitments != userCommitments { return "other commitments" }
        return nil
    }
}
