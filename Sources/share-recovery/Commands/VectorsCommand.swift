import ArgumentParser
import ShareRecovery
import ShareRecoveryVectors

/// `vectors verify|generate`: our published test vectors.
struct VectorsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vectors", abstract: "Check or regenerate the published test vectors.",
        discussion: helpText(
            "The vector files (docs/formats.md §9) let any implementation check itself against this one. `verify` checks every case; `generate` recomputes the files from a seed, byte for byte.",
            examples: [
                "share-recovery vectors verify Vectors",
                "share-recovery vectors generate /tmp/vectors",
            ]),
        subcommands: [Verify.self, Generate.self])

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every case of every vector file in DIR; exit 0 only if all pass.",
            discussion: helpText(
                "Prints one line per file with its counts; exits 1 if any case fails.",
                examples: [
                    "share-recovery vectors verify Vectors"
                ]))
        @Argument(help: "The vectors directory.") var directory: String

        func run() throws {
            let report = VectorSuite.verify(directory: directory)
            Terminal.error(report.description)
            Terminal.output(JSONWriter.write(report.jsonValue))
            guard report.isSuccess else {
                throw ShareRecoveryError(
                    .malformedInput, "\(report.failures.count) case(s) failed, \(report.problems.count) problem(s)")
            }
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the vector files, recomputed deterministically from a seed, into DIR.",
            discussion: helpText(
                "With the default seed the output equals the published Vectors/ files.",
                examples: [
                    "share-recovery vectors generate /tmp/vectors"
                ]))
        @Argument(help: "The output directory.") var directory: String
        @Option(help: "The seed (the published files use the default).") var seed = VectorSuite.publishedSeed

        func run() throws {
            let files = try VectorSuite.generate(seed: seed)
            try VectorSuite.write(files, toDirectory: directory)
            let report = VectorSuite.verify(directory: directory)
            Terminal.error(report.description)
            guard report.isSuccess else { throw ShareRecoveryError(.malformedInput, "generated vectors do not verify") }
        }
    }
}
