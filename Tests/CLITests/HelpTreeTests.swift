import Foundation
import Testing

/// The CLI's help is its first page of manual: every node of the command tree, found by walking the
/// SUBCOMMANDS sections from the root's help text (so a new command cannot slip past), prints
/// usage on stdout, exits 0, and carries an abstract and at least one runnable example.
@Suite("CLI help")
struct HelpTreeTests {
    /// One node of the command tree: its path below the root and what its `--help` printed.
    struct Node: Sendable {
        let path: [String]
        let help: CLIRun
    }

    /// Every node, in help order, found from each node's own help text. Walked once for the suite and
    /// kept: each `--help` is a process start, which costs seconds under a sanitizer.
    static let tree = Result { try walk() }

    static func walk(_ path: [String] = []) throws -> [Node] {
        let run = try CLIRunner.run("share-recovery", path + ["--help"])
        var nodes = [Node(path: path, help: run)]
        for name in subcommands(in: run.stdout) { nodes += try walk(path + [name]) }
        return nodes
    }

    /// The names listed under `SUBCOMMANDS:` (ArgumentParser indents each by two spaces).
    static func subcommands(in help: String) -> [String] {
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        var names: [String] = []
        for line in help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            // A name line starts with exactly two spaces; wrapped abstracts are indented further.
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else {
                continue
            }
            names.append(String(name))
        }
        return names
    }

    @Test("every node of the command tree prints its help with an example")
    func everyNodeHasHelp() throws {
        let nodes = try Self.tree.get()
        // The root and at least its fourteen commands and their subcommands: a broken walk finds fewer.
        #expect(nodes.count >= 30, "the walk found only \(nodes.map { $0.path.joined(separator: " ") })")
        for node in nodes {
            let path = node.path, run = node.help
            let name = (["share-recovery"] + path).joined(separator: " ")
            #expect(run.status == 0, "\(name) --help exited \(run.status): \(run.stderr)")
            #expect(run.stderr.isEmpty, "\(name) --help wrote to stderr: \(run.stderr)")
            #expect(run.stdout.hasPrefix("OVERVIEW: "), "\(name) has no abstract")
            #expect(run.stdout.contains("USAGE: \(name)"), "\(name) --help has no usage line")
            guard let examples = run.stdout.range(of: "\nEXAMPLES:\n") else {
                Issue.record("\(name) --help has no EXAMPLES block")
                continue
            }
            let exampleLines = run.stdout[examples.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("  ") }
            #expect(
                exampleLines.contains { $0.hasPrefix("  share-recovery ") },
                "\(name)'s examples do not start with share-recovery")
            // Every example of a subcommand names the command it documents.
            if !path.isEmpty {
                #expect(
                    exampleLines.contains { $0.hasPrefix("  \(name)") || $0.hasPrefix("  share-recovery help") },
                    "\(name) has no example of itself")
            }
        }
    }

    @Test("help X prints the same text as X --help")
    func helpCommandMatchesFlag() throws {
        for node in try Self.tree.get() where !node.path.isEmpty {
            let viaHelp = try CLIRunner.run("share-recovery", ["help"] + node.path)
            #expect(viaHelp.status == 0, "help \(node.path) exited \(viaHelp.status)")
            #expect(viaHelp.stdout == node.help.stdout, "help \(node.path) differs from \(node.path) --help")
        }
    }

    @Test("--version prints the package version")
    func version() throws {
        // The value lives in one place, Sources/share-recovery/Support/Version.swift.
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/share-recovery/Support/Version.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        let declared = try #require(text.firstMatch(of: /packageVersion = "([^"]+)"/)?.output.1)
        let run = try CLIRunner.run("share-recovery", ["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "\(declared)\n")
    }

    @Test("completion scripts", arguments: ["bash", "zsh", "fish"])
    func completionScript(shell: String) throws {
        let run = try CLIRunner.run("share-recovery", ["--generate-completion-script", shell])
        #expect(run.status == 0, "\(shell): \(run.stderr)")
        for command in ["backup", "recover", "serve", "kit"] {
            #expect(run.stdout.contains(command), "the \(shell) script does not complete \(command)")
        }
    }

    @Test("an unknown option is a usage error with a pointer to the help")
    func unknownOption() throws {
        let run = try CLIRunner.run("share-recovery", ["demo", "--no-such-option"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("Unknown option '--no-such-option'"))
        #expect(run.stderr.contains("share-recovery demo --help"))
    }
}
