#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery
@testable import ShareRecoveryVectors

/// The verifier is not vacuous: a published file with one expectation changed fails, on that case
/// and only that case.
@Suite("Vector verifier")
struct VectorVerifierTests {
    /// The published files (empty if unreadable, which fails every test below).
    static let published: [String: String] = (try? VectorFileTests.files(in: VectorFileTests.directory)) ?? [:]

    /// One published file with the case `id` replaced by `change(case)`.
    static func mutating(_ file: String, id: String, _ change: (JSONValue) -> JSONValue) throws -> [String: String] {
        let document = try StrictJSON.parse(try #require(published[file], "no published \(file)"))
        guard case .object(var members) = document, let index = members.firstIndex(where: { $0.key == "cases" }),
            case .array(var cases) = members[index].value
        else { throw VectorProblem("not a vector file") }
        let position = try #require(cases.firstIndex { $0["id"] == .string(id) }, "no case \(id) in \(file)")
        cases[position] = change(cases[position])
        members[index].value = .array(cases)
        return [file: JSONWriter.writeIndented(.object(members), asciiOnly: true) + "\n"]
    }

    /// Expects exactly one failure, on `id`, whose reason mentions `reason`.
    static func expectOnlyFailure(_ files: [String: String], id: String, reason: String) {
        let report = VectorSuite.verify(files: files)
        #expect(!report.isSuccess)
        #expect(report.failures.map(\.caseId) == [id], "\(report)")
        #expect(report.failures.first?.reason.contains(reason) == true, "\(report.failures)")
        let file = report.files[0]
        #expect(file.passed == file.casesRun - 1)
    }

    static func flippingCharacter(_ text: String, at offset: Int) -> String {
        var characters = Array(text)
        characters[offset] = characters[offset] == "A" ? "B" : "A"
        return String(characters)
    }

    static func string(_ value: JSONValue?) -> String {
        guard case .string(let text)? = value else { return "" }
        return text
    }

    @Test func eachPublishedFileVerifiesOnItsOwn() {
        #expect(Set(Self.published.keys) == Set(VectorSuite.fileNames))
        // ecdsa.json's sample is replayed by VectorFileTests; all of it would take a minute here.
        for (name, text) in Self.published where name != "ecdsa.json" {
            let report = VectorSuite.verify(files: [name: text])
            #expect(report.isSuccess, "\(report)")
        }
    }

    // MARK: Changed outputs of valid cases

    @Test func changedCipherTextByteFails() throws {
        let id = "secp256k1-2of2-password"
        let files = try Self.mutating("ciphertext.json", id: id) {
            // A byte of the sealed body (well past the 70-byte header): the tag no longer verifies.
            $0.setting("cipherText", .string(Self.flippingCharacter(Self.string($0["cipherText"]), at: 150)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "authenticationFailed")
    }

    @Test func changedDerivedKeyFails() throws {
        let id = "ed25519-2of3-passkey"
        let files = try Self.mutating("ciphertext.json", id: id) {
            $0.setting("derivedKey", .string(String(repeating: "00", count: 32)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "derivedKey")
    }

    @Test func changedRecordHexOfCipherTextFails() throws {
        let id = "secp256k1-2of2-iCloud"
        let files = try Self.mutating("ciphertext.json", id: id) {
            $0.setting("recordHex", .string("00" + Self.string($0["recordHex"]).dropFirst(2)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "decrypting does not give recordHex")
    }

    @Test func changedShareRecordJSONFails() throws {
        let id = "ed25519-backup-2of3-party3"
        let files = try Self.mutating("share-record.json", id: id) {
            $0.setting("json", $0["json"]!.setting("generation", .integer(5)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "different shares")
    }

    @Test func changedCustodianRecordFails() throws {
        let id = "secp256k1-2of2-password-party2"
        let files = try Self.mutating("custodian-share.json", id: id) {
            $0.setting("recordHex", .string("00" + Self.string($0["recordHex"]).dropFirst(2)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "the sealed record is not recordHex")
    }

    @Test func changedSelectionFails() throws {
        let id = "secp256k1-2of3-lowest-index-wins"
        let files = try Self.mutating("selection.json", id: id) { $0.setting("selected", .array([.integer(3)])) }
        Self.expectOnlyFailure(files, id: id, reason: "selected [2], expected [3]")
    }

    @Test func changedNewShareFails() throws {
        let id = "ed25519-2of3-recovery-dealers-1-and-3"
        let files = try Self.mutating("resharing.json", id: id) { vector in
            guard case .array(var shares)? = vector["newShares"] else { return vector }
            shares[2] = shares[2].setting("kind", .string("backup"))
            return vector.setting("newShares", .array(shares))
        }
        Self.expectOnlyFailure(files, id: id, reason: "party 3")
    }

    @Test func changedPolynomialFails() throws {
        let id = "secp256k1-2of2-backup-creation"
        let files = try Self.mutating("resharing.json", id: id) { vector in
            vector.setting(
                "polynomials",
                vector["polynomials"]!.setting("2", .array([.string(String(repeating: "11", count: 32))])))
        }
        Self.expectOnlyFailure(files, id: id, reason: "differs")
    }

    // MARK: Changed expectations of invalid cases

    @Test func changedErrorNameFails() throws {
        let id = "binary-trailing-byte"
        let files = try Self.mutating("share-record.json", id: id) { $0.setting("error", .string("invalidScalar")) }
        Self.expectOnlyFailure(files, id: id, reason: "expected invalidScalar, got malformedRecord")
    }

    @Test func changedSelectionErrorFails() throws {
        let id = "ed25519-only-tampered-match"
        let files = try Self.mutating("selection.json", id: id) { $0.setting("error", .string("noMatchingShare")) }
        Self.expectOnlyFailure(files, id: id, reason: "got inconsistentShares")
    }

    @Test func changedResharingErrorFails() throws {
        let id = "secp256k1-bad-sub-share-for-party2"
        let files = try Self.mutating("resharing.json", id: id) { $0.setting("error", .string("dealerCheckFailed")) }
        Self.expectOnlyFailure(files, id: id, reason: "got subShareCheckFailed")
    }

    @Test func invalidCaseThatIsAcceptedFails() throws {
        // A valid cipherText marked invalid: decrypting succeeds, which the verifier reports.
        let id = "secp256k1-2of2-cloudKey"
        let files = try Self.mutating("ciphertext.json", id: id) {
            guard case .object(let members) = $0 else { return $0 }
            let kept = members.filter { ["id", "method", "cipherText", "keyMaterial"].contains($0.key) }
            return .object(kept + [("result", .string("invalid")), ("error", .string("authenticationFailed"))])
        }
        Self.expectOnlyFailure(files, id: id, reason: "accepted")
    }

    @Test func validCaseThatIsRefusedFails() throws {
        let id = "secp256k1-2of2-password-party2"
        let files = try Self.mutating("custodian-share.json", id: id) {
            $0.setting("custodianSecretKey", .string(String(repeating: "42", count: 32)))
        }
        Self.expectOnlyFailure(files, id: id, reason: "unsealFailed")
    }

    // MARK: ECDSA transcripts

    /// An ecdsa.json holding only the case `id`, changed by `change`.
    static func ecdsaFile(_ id: String, _ change: (JSONValue) -> JSONValue) throws -> [String: String] {
        let vector = try #require(
            VectorFileTests.ecdsaCases.first { $0["id"] == .string(id) }, "no case \(id) in ecdsa.json")
        return ["ecdsa.json": VectorFileTests.ecdsaFile([change(vector)])]
    }

    /// The case with transcript entry `position`'s payload changed in its first hex digit.
    static func flippingPayload(_ vector: JSONValue, at position: Int) -> JSONValue {
        guard case .array(var entries)? = vector["transcript"] else { return vector }
        var payload = Array(string(entries[position]["payload"]))
        payload[0] = payload[0] == "0" ? "1" : "0"
        entries[position] = entries[position].setting("payload", .string(String(payload)))
        return vector.setting("transcript", .array(entries))
    }

    @Test func changedPairSetupPayloadFails() throws {
        let files = try Self.ecdsaFile("2of2") { Self.flippingPayload($0, at: 1) }
        Self.expectOnlyFailure(files, id: "2of2", reason: "transcript[1] (pairSetup1 from 2 to 1) differs")
    }

    @Test func changedSigningPayloadFails() throws {
        // Entry 4 is the first signing message, after both pair setup rounds of the pair.
        let files = try Self.ecdsaFile("2of2") { Self.flippingPayload($0, at: 4) }
        Self.expectOnlyFailure(files, id: "2of2", reason: "transcript[4] (round1 from 1 to 2) differs")
    }

    @Test func changedCulpritFails() throws {
        let id = "2of2-pair-setup-1-proof-from-1"
        let files = try Self.ecdsaFile(id) { $0.setting("culprit", .integer(2)) }
        Self.expectOnlyFailure(files, id: id, reason: "expected culprit 2, got 1")
    }

    @Test func reorderedTranscriptFails() throws {
        let id = "2of2-pair-setup-1-proof-from-1"
        let files = try Self.ecdsaFile(id) { vector in
            guard case .array(var entries)? = vector["transcript"] else { return vector }
            entries.swapAt(0, 1)
            return vector.setting("transcript", .array(entries))
        }
        Self.expectOnlyFailure(files, id: id, reason: "but the replay sends pairSetup1 from 1 to 2 next")
    }

    // MARK: Malformed vector files

    @Test func errorNamesOutsideSection9AreRefused() throws {
        let id = "empty-password"
        let files = try Self.mutating("ciphertext.json", id: id) { $0.setting("error", .string("notFound")) }
        Self.expectOnlyFailure(files, id: id, reason: "§9")
    }

    @Test func unknownCaseFieldsAreRefused() throws {
        let id = "secp256k1-signing-2of2-party1"
        let files = try Self.mutating("share-record.json", id: id) { $0.setting("comment", .string("hi")) }
        Self.expectOnlyFailure(files, id: id, reason: "unknown field")
    }

    @Test func validCaseWithErrorIsRefused() throws {
        let id = "secp256k1-2of2-one-candidate"
        let files = try Self.mutating("selection.json", id: id) { $0.setting("error", .string("noMatchingShare")) }
        Self.expectOnlyFailure(files, id: id, reason: "no \"error\"")
    }

    @Test func duplicateIdsAreRefused() throws {
        let files = try Self.mutating("resharing.json", id: "ed25519-2of2-recovery") {
            $0.setting("id", .string("ed25519-2of2-backup-creation"))
        }
        let report = VectorSuite.verify(files: files)
        #expect(
            report.failures == [VectorReport.Failure(caseId: "ed25519-2of2-backup-creation", reason: "duplicate id")])
    }

    @Test func fileLevelProblemsAreReported() {
        let report = VectorSuite.verify(files: [
            "a.json": "{\"format\": \"share-recovery/vectors/unknown@1\", \"description\": \"\", \"cases\": []}",
            "b.json": "not json",
            "c.json": "{\"format\": \"share-recovery/vectors/selection@1\", \"cases\": []}",
            "d.json":
                "{\"format\": \"share-recovery/vectors/selection@1\", \"description\": \"x\", \"cases\": [], \"cases\": []}",
        ])
        #expect(!report.isSuccess)
        #expect(report.files.map(\.name) == ["a.json", "b.json", "c.json", "d.json"])
        #expect(report.files.allSatisfy { $0.failures.count == 1 && $0.failures[0].caseId == nil })
        #expect(report.files[0].failures[0].reason.contains("unknown format"))
    }

    @Test func emptyFilesAreNotSuccess() {
        #expect(!VectorSuite.verify(files: [:]).isSuccess)
    }

    // MARK: Directories

    @Test func directoryVerification() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("vector-verifier-\(UInt64.random(in: 0...UInt64.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(!VectorSuite.verify(directory: directory).isSuccess)
        #expect(VectorSuite.verify(directory: directory).problems.count == 1)

        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(VectorSuite.verify(directory: directory).problems == ["no *.json files in \(directory)"])

        let files = try Self.mutating("selection.json", id: "ed25519-nothing-found") {
            $0.setting("error", .string("inconsistentShares"))
        }
        try VectorSuite.write(files.merging(["README.md": "not a vector file"]) { $1 }, toDirectory: directory)
        let report = VectorSuite.verify(directory: directory)
        #expect(report.files.map(\.name) == ["selection.json"])
        #expect(report.failures.map(\.caseId) == ["ed25519-nothing-found"])
        #expect(
            report.description.contains("FAIL ed25519-nothing-found: expected inconsistentShares, got noMatchingShare"))
        guard case .object(let members) = report.jsonValue else { Issue.record("report JSON is not an object"); return }
        #expect(members.first?.value == .bool(false))
    }
}
