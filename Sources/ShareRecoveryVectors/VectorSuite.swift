#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import Foundation
import ShareCrypto
import ShareRecovery

/// The published test vectors of docs/formats.md §9 (`Vectors/` at the repository root): generation
/// from a seed, and verification by recomputing every case.
///
/// Every input of every case (secrets, keys, salts, nonces, polynomial coefficients) is written
/// out, so verification needs no random source: the seed only decides which inputs were drawn.
public enum VectorSuite {
    /// The seed the published files were generated from.
    public static let publishedSeed = "share-recovery/vectors@1"

    /// The file names, in generation order.
    public static var fileNames: [String] { VectorRunner.kinds.map { $0.fileName } }

    /// Why generation failed: a generated case that does not verify is a bug, never a published vector.
    public struct GenerationError: Error, Sendable, CustomStringConvertible {
        /// The file, and the case when one is to blame.
        public let description: String
    }

    /// Builds every vector file.
    ///
    /// Each file draws from its own stream, `DeterministicRandom(seed: seed + "/" + kind)`, so adding
    /// cases to one file leaves the others unchanged. Every generated file is verified before it is
    /// returned.
    /// - Parameter seed: Any text; ``publishedSeed`` reproduces the published files byte for byte.
    /// - Returns: File name → JSON text (ASCII, two-space indentation, one trailing newline).
    /// - Throws: ``GenerationError`` when a case cannot be built or does not verify.
    public static func generate(seed: String) throws -> [String: String] {
        try generate(seed: seed, kinds: VectorRunner.kinds)
    }

    /// Builds the files of `kinds` only (tests leave out the slow ECDSA replays).
    static func generate(seed: String, kinds: [any VectorKind.Type]) throws -> [String: String] {
        var files: [String: String] = [:]
        for kind in kinds {
            let random = DeterministicRandom(seed: Array("\(seed)/\(kind.kind)".utf8))
            let cases: [JSONValue]
            do {
                cases = try kind.cases(random: random)
            } catch {
                throw GenerationError(description: "\(kind.fileName): \(error)")
            }
            let document = JSONValue.object([
                ("format", .string(kind.format)),
                ("description", .string(kind.summary)),
                ("cases", .array(cases)),
            ])
            let text = JSONWriter.writeIndented(document, indent: 2, asciiOnly: true) + "\n"
            let report = VectorRunner.verifyFile(name: kind.fileName, text: Array(text.utf8))
            if let failure = report.failures.first {
                throw GenerationError(description: "\(kind.fileName): generated \(failure)")
            }
            files[kind.fileName] = text
        }
        return files
    }

    /// Verifies every `*.json` file of a directory (not its subdirectories), in name order.
    /// - Parameter directory: The directory path.
    /// - Returns: The report; a missing or empty directory is reported, never thrown.
    public static func verify(directory: String) -> VectorReport {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
                .sorted()
        } catch {
            return VectorReport(files: [], problems: ["cannot list \(directory): \(error.localizedDescription)"])
        }
        guard !names.isEmpty else { return VectorReport(files: [], problems: ["no *.json files in \(directory)"]) }
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        var files: [VectorReport.File] = []
        for name in names {
            do {
                let data = try Data(contentsOf: base.appendingPathComponent(name))
                files.append(VectorRunner.verifyFile(name: name, text: [UInt8](data)))
            } catch {
                files.append(
                    VectorReport.File(
                        name: name, format: nil, casesRun: 0, passed: 0,
                        failures: [
                            VectorReport.Failure(caseId: nil, reason: "cannot read: \(error.localizedDescription)")
                        ]))
            }
        }
        return VectorReport(files: files, problems: [])
    }

    /// Verifies files held in memory.
    /// - Parameter files: File name → JSON text.
    /// - Returns: The report, files in name order.
    public static func verify(files: [String: String]) -> VectorReport {
        guard !files.isEmpty else { return VectorReport(files: [], problems: ["no vector files"]) }
        return VectorReport(
            files: files.keys.sorted().map { VectorRunner.verifyFile(name: $0, text: Array(files[$0]!.utf8)) },
            problems: [])
    }

    /// Writes generated files into a directory, creating it if needed.
    /// - Parameters:
    ///   - files: File name → JSON text, as ``generate(seed:)`` returns.
    ///   - directory: The directory path.
    /// - Throws: Foundation's error when a file cannot be written.
    public static func write(_ files: [String: String], toDirectory directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            try Data(text.utf8).write(to: base.appendingPathComponent(name), options: .atomic)
        }
    }
}
