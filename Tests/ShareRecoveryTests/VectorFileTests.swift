#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import Foundation
import ShareCrypto
import Testing

@testable import ShareRecovery
@testable import ShareRecoveryVectors

/// The published vectors (docs/formats.md §9): a copy of the repository's `Vectors/` ships as a test
/// resource, so these tests also pass on a checkout that runs only this target.
@Suite("Published vectors")
struct VectorFileTests {
    /// The resource copy of `Vectors/`.
    static var directory: URL {
        Bundle.module.url(forResource: "Vectors", withExtension: nil)!.appendingPathComponent("share-recovery")
    }

    /// `Vectors/` at the repository root, found from this file's path; `nil` when the tests run from
    /// a tree without it (a mirror of the test target alone).
    static var repositoryDirectory: URL? {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Vectors")
        return FileManager.default.fileExists(atPath: root.appendingPathComponent("share-record.json").path)
            ? root : nil
    }

    /// The smallest case counts the vectors promise.
    static let minimumCases: [String: Int] = [
        "share-record.json": 20, "ciphertext.json": 30, "custodian-share.json": 15, "selection.json": 15,
        "resharing.json": 10, "dkg.json": 15, "signing.json": 15,
    ]

    /// The ECDSA cases the tests replay. Each replay is pair setups and a signature (about 1.5 s per
    /// pair in a debug build), so these tests run this sample; CLITests' `vectors verify Vectors`
    /// replays every case.
    static let ecdsaSample: Set<String> = ["2of2", "2of2-pair-setup-2-point-is-A-from-2"]

    /// Every kind but ECDSA, whose files the tests build and check in full.
    static var fastKinds: [any VectorKind.Type] { VectorRunner.kinds.filter { $0.kind != ECDSAVectors.kind } }

    /// The published ecdsa.json's text and cases, read once: its megabytes of transcripts take
    /// seconds to parse in a debug build. Empty when unreadable, which fails the tests using it.
    static let ecdsaText: String =
        (try? String(decoding: Data(contentsOf: directory.appendingPathComponent("ecdsa.json")), as: UTF8.self)) ?? ""
    static let ecdsaCases: [JSONValue] = {
        guard case .array(let cases)? = (try? StrictJSON.parse(ecdsaText, maximumSize: 64 << 20))?["cases"] else {
            return []
        }
        return cases
    }()

    /// An ecdsa.json text holding `cases`.
    static func ecdsaFile(_ cases: [JSONValue]) -> String {
        let document = JSONValue.object([
            ("format", .string(ECDSAVectors.format)), ("description", .string(ECDSAVectors.summary)),
            ("cases", .array(cases)),
        ])
        return JSONWriter.writeIndented(document, asciiOnly: true) + "\n"
    }

    /// `files` with ecdsa.json cut to ``ecdsaSample``.
    static func sampled(_ files: [String: String]) -> [String: String] {
        var files = files
        files["ecdsa.json"] = ecdsaFile(
            ecdsaCases.filter { value in ecdsaSample.contains { value["id"] == .string($0) } })
        return files
    }

    static func files(in directory: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            files[name] = String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
        }
        return files
    }

    @Test func everyPublishedCaseVerifies() throws {
        let report = VectorSuite.verify(files: Self.sampled(try Self.files(in: Self.directory)))
        for file in report.files {
            print("\(file.name): \(file.casesRun) cases, \(file.passed) passed")
        }
        #expect(report.problems.isEmpty)
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.isSuccess)
        #expect(Set(report.files.map(\.name)) == Set(VectorSuite.fileNames))
        for file in report.files {
            #expect(file.casesRun >= Self.minimumCases[file.name] ?? 1, "\(file.name) has \(file.casesRun) cases")
            #expect(file.format == "share-recovery/vectors/\(file.name.dropLast(5))@1")
        }
        #expect(report.casesRun >= Self.minimumCases.values.reduce(0, +))
    }

    @Test("ecdsa.json: 12 valid cases, and a tampered message of each round and direction")
    func ecdsaCoverage() throws {
        let cases = Self.ecdsaCases
        let valid = cases.filter { $0["result"] == .string("valid") }
        let invalid = cases.filter { $0["result"] == .string("invalid") }
        #expect(valid.count >= 12)
        #expect(invalid.count >= 12)
        // Which message each invalid case replaces: the one entry that differs from the valid case
        // over the same shares (the transcripts are the same up to it).
        var replaced = Set<String>()
        for vector in invalid {
            let base = try #require(valid.first { $0["shares"] == vector["shares"] }, "no valid case for \(vector)")
            guard case .array(let honest)? = base["transcript"], case .array(let changed)? = vector["transcript"] else {
                Issue.record("transcripts must be arrays")
                continue
            }
            let differing = zip(honest, changed).filter { $0.0 != $0.1 }.map(\.1)
            #expect(differing.count >= 1 && changed.count == honest.count)
            guard let entry = differing.first, case .string(let round)? = entry["round"],
                case .number(let from)? = entry["from"]
            else { continue }
            replaced.insert("\(round) from \(from)")
        }
        for round in ECDSAVectors.rounds {
            for from in [1, 2] {
                #expect(replaced.contains("\(round) from \(from)"), "no tampered \(round) from \(from)")
            }
        }
    }

    /// docs/formats.md §9's normative error names, written out here rather than taken from the code under test.
    /// `pairSetupStale` excepted below: an `ecdsa@1` replay makes its pair setups from the shares given,
    /// so no vector can present a stale one.
    static let normativeErrorNames = [
        "malformedRecord", "malformedCipherText", "malformedCustodianShare", "unsupportedVersion", "unsupportedMethod",
        "kdfMismatch", "invalidKdfParameters", "invalidKeyMaterial", "emptySecret", "invalidParameters",
        "invalidScalar",
        "invalidPoint", "invalidShare", "publicKeyMismatch", "authenticationFailed", "tamperedShare", "unsealFailed",
        "dealerCheckFailed", "subShareCheckFailed", "noMatchingShare", "inconsistentShares", "dkgProofFailed",
        "invalidSignatureShare", "nonceReused", "ecdsaCheckFailed", "pairSetupStale",
    ]

    @Test("every §9 error name is expected by at least one published case")
    func everyErrorNameAppears() throws {
        // ecdsa.json by its parsed cases: searching its megabytes as text is slow in a debug build.
        let texts = try Self.files(in: Self.directory).filter { $0.key != "ecdsa.json" }.values.joined()
        let ecdsaErrors = Self.ecdsaCases.compactMap { $0["error"] }
        for name in Self.normativeErrorNames where name != "pairSetupStale" {
            #expect(
                texts.contains("\"error\": \"\(name)\"") || ecdsaErrors.contains(JSONValue.string(name)),
                "no case expects \(name)")
        }
    }

    @Test func bothOutcomesAppearInEveryFile() throws {
        for (name, text) in try Self.files(in: Self.directory) {
            #expect(text.contains("\"result\": \"valid\""), "\(name) has no valid case")
            #expect(text.contains("\"result\": \"invalid\""), "\(name) has no invalid case")
        }
    }

    @Test func generatorReproducesThePublishedFilesByteForByte() throws {
        let generated = try VectorSuite.generate(seed: VectorSuite.publishedSeed, kinds: Self.fastKinds)
        #expect(Set(generated.keys) == Set(VectorSuite.fileNames).subtracting(["ecdsa.json"]))
        let published = try Self.files(in: Self.directory)
        #expect(Set(published.keys) == Set(VectorSuite.fileNames))
        for (name, text) in generated {
            #expect(published[name] == text, "\(name) differs from the generator's output: regenerate the vectors")
        }
        if let root = Self.repositoryDirectory {
            let rootFiles = try Self.files(in: root)
            for (name, text) in generated {
                #expect(rootFiles[name] == text, "Vectors/\(name) differs from the generator's output")
            }
        }
    }

    @Test("the ECDSA sample regenerates byte for byte from the published seed; the file's head is the generator's")
    func ecdsaSampleRegenerates() throws {
        let published = Self.ecdsaCases
        let random = DeterministicRandom(seed: Array("\(VectorSuite.publishedSeed)/\(ECDSAVectors.kind)".utf8))
        let generated = try ECDSAVectors.cases(random: random, only: Self.ecdsaSample)
        #expect(generated.count == Self.ecdsaSample.count)
        for value in generated {
            let id = value["id"]
            let original = try #require(published.first { $0["id"] == id }, "no published \(String(describing: id))")
            #expect(
                JSONWriter.writeIndented(original, asciiOnly: true) == JSONWriter.writeIndented(value, asciiOnly: true),
                "\(String(describing: id)) differs from the generator's output: regenerate the vectors")
        }
        // The file's head is the generator's (cases follow), and the repository's copy is this one.
        let head = Self.ecdsaFile([]).dropLast("[]\n}\n".count)
        #expect(Self.ecdsaText.hasPrefix(head))
        if let root = Self.repositoryDirectory {
            let rootText = String(
                decoding: try Data(contentsOf: root.appendingPathComponent("ecdsa.json")), as: UTF8.self)
            #expect(rootText == Self.ecdsaText, "Vectors/ecdsa.json differs from the test copy")
        }
    }

    @Test func generationIsDeterministicAndSeedDependent() throws {
        let first = try VectorSuite.generate(seed: "another seed", kinds: Self.fastKinds)
        let second = try VectorSuite.generate(seed: "another seed", kinds: Self.fastKinds)
        #expect(first == second)
        let published = try Self.files(in: Self.directory)
        #expect(first["resharing.json"] != published["resharing.json"])
        #expect(VectorSuite.verify(files: first).isSuccess)
    }
}
