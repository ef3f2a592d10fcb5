import Foundation
import ShareRecovery
import ShareRecoveryHTTP
import Testing

/// docs/recovery.md's "What to do on each error" is what a wallet service builds its error handling
/// from: it must name every code the HTTP side can throw, the engine codes an operation meets, and
/// say "retry" exactly where the error itself says it is retryable.
@Suite("The error table of docs/recovery.md")
struct ErrorTableTests {
    struct Row {
        let transportCodes: [TransportError.Code]
        let engineCodes: [ShareRecoveryError.Code]
        let retry: String
    }

    /// Engine codes a backup, recovery or method change over HTTP meets beside the transport's: the
    /// device's store, the backup's secret, the custodian's checks, the call itself.
    static let engineCodesMet: Set<ShareRecoveryError.Code> = [
        .operationInProgress, .conflict, .cancelled, .invalidParameters, .notAuthenticated, .lockedOut,
        .authenticationFailed, .notFound, .noMatchingShare, .inconsistentShares, .dealerCheckFailed,
        .subShareCheckFailed, .publicKeyMismatch, .invalidShare, .storageFailure, .storeCorrupted,
    ]

    /// The table's rows: `| `TransportError` `a`, `b` | retry? | what to do |`; a row without a type
    /// names engine codes.
    static func rows() throws -> [Row] {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/recovery.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let section = try #require(text.range(of: "## What to do on each error"))
        var rows: [Row] = []
        for line in text[section.upperBound...].split(separator: "\n").drop(while: { !$0.hasPrefix("|") }) {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, cells[0] != "error", !cells[0].hasPrefix("---") else { continue }
            var names = cells[0].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            let isTransport = names.first == "TransportError"
            if names.first == "TransportError" || names.first == "ShareRecoveryError" { names.removeFirst() }
            rows.append(
                Row(
                    transportCodes: try isTransport
                        ? names.map { try #require(TransportError.Code(rawValue: $0), "\($0)") } : [],
                    engineCodes: try isTransport
                        ? [] : names.map { try #require(ShareRecoveryError.Code(name: $0), "\($0)") },
                    retry: cells[1]))
        }
        return rows
    }

    @Test("every transport code and every engine code an operation meets has a row, and only one")
    func everyCodeHasARow() throws {
        let rows = try Self.rows()
        let transport = rows.flatMap(\.transportCodes)
        let engine = rows.flatMap(\.engineCodes)
        #expect(
            Set(TransportError.Code.allCases).subtracting(transport).isEmpty,
            "\(Set(TransportError.Code.allCases).subtracting(transport))")
        #expect(Self.engineCodesMet.subtracting(engine).isEmpty, "\(Self.engineCodesMet.subtracting(engine))")
        #expect(transport.count == Set(transport).count && engine.count == Set(engine).count, "a code in two rows")
    }

    @Test("a row says retry (yes, later, when …) exactly where the error says it is retryable")
    func retryColumnAgreesWithTheErrors() throws {
        for row in try Self.rows() {
            let saysRetry = row.retry.hasPrefix("yes") || row.retry == "later" || row.retry.hasPrefix("when ")
            for code in row.transportCodes {
                #expect(TransportError(code, "").isRetryable == saysRetry, "TransportError \(code): \(row.retry)")
            }
            for code in row.engineCodes {
                #expect(
                    ShareRecoveryError(code, "").isRetryable == saysRetry, "ShareRecoveryError \(code): \(row.retry)")
            }
        }
    }
}
