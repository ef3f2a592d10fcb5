#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import Foundation
import ShareRecovery
import ShareRecoveryVectors
import Testing

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

    static func files(in directory: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            files[name] = String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
        }
        return files
    }

    @Test func everyPublishedCaseVerifies() throws {
        let report = VectorSuite.verify(directory: Self.directory.path)
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

    /// docs/formats.md §9's normative error names, written out here rather than taken from the code under test.
    static let normativeErrorNames = [
        "malformedRecord", "malformedCipherText", "malformedCustodianShare", "unsupportedVersion", "unsupportedMethod",
        "kdfMismatch", "invalidKdfParameters", "invalidKeyMaterial", "emptySecret", "invalidParameters",
        "invalidScalar",
        "invalidPoint", "invalidShare", "publicKeyMismatch", "authenticationFailed", "tamperedShare", "unsealFailed",
        "dealerCheckFailed", "subShareCheckFailed", "noMatchingShare", "inconsistentShares", "dkgProofFailed",
        "invalidSignatureShare", "nonceReused",
    ]

    @Test("every §9 error name is expected by at least one published case")
    func everyErrorNameAppears() throws {
        let texts = try Self.files(in: Self.directory).values.joined()
        for name in Self.normativeErrorNames {
            #expect(texts.contains("\"error\": \"\(name)\""), "no case expects \(name)")
        }
    }

    @Test func bothOutcomesAppearInEveryFile() throws {
        for (name, text) in try Self.files(in: Self.directory) {
            #expect(text.contains("\"result\": \"valid\""), "\(name) has no valid case")
            #expect(text.contains("\"result\": \"invalid\""), "\(name) has no invalid case")
        }
    }

    @Test func generatorReproducesThePublishedFilesByteForByte() throws {
        let generated = try VectorSuite.generate(seed: VectorSuite.publishedSeed)
        #expect(Set(generated.keys) == Set(VectorSuite.fileNames))
        let published = try Self.files(in: Self.directory)
        #expect(Set(published.keys) == Set(generated.keys))
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

    @Test func generationIsDeterministicAndSeedDependent() throws {
        let first = try VectorSuite.generate(seed: "another seed")
        let second = try VectorSuite.generate(seed: "another seed")
        #expect(first == second)
        let published = try Self.files(in: Self.directory)
        #expect(first["resharing.json"] != published["resharing.json"])
        #expect(VectorSuite.verify(files: first).isSuccess)
    }
}
