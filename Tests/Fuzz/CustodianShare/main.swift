// Fuzz target: custodian backup share JSON (docs/formats.md §6) and selection (§7).
//
// Input: one byte choosing a selection context (user backup share, backup method and custodian key
// of a case in Vectors/selection.json), then the candidate JSON texts, one per line. Each
// candidate is parsed on its own, then all of them go through CustodianShareSelector.
// scripts/fuzz-seeds.py writes each selection case's candidates as a seed in this layout.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FuzzSupport
import ShareCrypto
import ShareRecovery

struct SelectionContext {
    let userShare: ShareRecord
    let method: BackupMethod
    let selector: CustodianShareSelector
}

/// One context per case of Vectors/selection.json, in file order (the seed script numbers its seeds
/// the same way); `nil` where the case's user share, method or key is itself invalid. The path can
/// be overridden with SHARE_RECOVERY_FUZZ_VECTORS (the Vectors directory).
func loadContexts() -> [SelectionContext?] {
    let directory =
        ProcessInfo.processInfo.environment["SHARE_RECOVERY_FUZZ_VECTORS"]
        ?? (String(#filePath).components(separatedBy: "/Tests/Fuzz/").first! + "/Vectors")
    guard let data = FileManager.default.contents(atPath: directory + "/selection.json"),
        let file = try? StrictJSON.parse(Array(data)), case .array(let cases)? = file["cases"]
    else { fuzzFailure("cannot read \(directory)/selection.json") }
    return cases.map { item -> SelectionContext? in
        guard let userValue = item["userShare"], let user = try? ShareRecord(jsonValue: userValue),
            case .string(let methodName)? = item["method"], let method = BackupMethod(name: methodName),
            case .string(let keyHex)? = item["custodianSecretKey"], let keyBytes = Hex.decode(keyHex),
            let key = try? SealingKeyPair(secretKey: SecureBytes(copying: keyBytes))
        else { return nil }
        return SelectionContext(userShare: user, method: method, selector: CustodianShareSelector(custodianKey: key))
    }
}

let contexts = loadContexts()
guard let fallback = contexts.compactMap({ $0 }).first else { fuzzFailure("no usable selection contexts") }

/// Codes a single candidate may be refused with while parsing (§6).
let parseCodes: Set<ShareRecoveryError.Code> = [
    .malformedCustodianShare, .unsupportedVersion, .invalidParameters, .unsupportedMethod,
]

runFuzzer { input in
    guard let choice = input.first else { return }
    let context = contexts[Int(choice) % contexts.count] ?? fallback
    let text = String(decoding: input.dropFirst(), as: UTF8.self)
    let candidates = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    for candidate in candidates {
        do throws(ShareRecoveryError) {
            let share = try CustodianBackupShare(json: candidate)
            // The writer's output must read back as the same value.
            fuzzCheck((try? CustodianBackupShare(json: share.json)) == share, "share → JSON → share differs")
        } catch {
            fuzzCheck(parseCodes.contains(error.code), "parse failed with unexpected code \(error.code)")
        }
    }

    let user = context.userShare
    let outcome = context.selector.select(for: user, method: context.method, candidates: candidates)
    let reports = outcome.reports
    fuzzCheck(reports.count == candidates.count, "not every candidate has a report")
    fuzzCheck(reports.map(\.position) == Array(candidates.indices), "reports are not in candidate order")
    guard case .selected(let records, _) = outcome else { return }
    // §7: exactly t−1 distinct other indices, lowest first, each a backup share of the user's set.
    fuzzCheck(records.count == user.threshold - 1, "selected \(records.count) shares for threshold \(user.threshold)")
    let indices = records.map(\.partyIndex)
    fuzzCheck(
        indices == indices.sorted() && Set(indices).count == indices.count, "selected indices not distinct ascending")
    fuzzCheck(!indices.contains(user.partyIndex), "selected the user's own index")
    for record in records {
        fuzzCheck(record.kind == .backup && record.secret != nil, "selected record is not a backup share with a secret")
        fuzzCheck(record.isSameSet(as: user), "selected record belongs to another set")
    }
    fuzzCheck(
        reports.filter { $0.verdict == .selected }.count == records.count, "selected reports do not match the records")
}
