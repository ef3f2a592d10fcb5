import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// docs/newcomer-errors.md is executable: its setup block and each mistake's command run here as
/// written, and stderr must end with exactly the lines the page shows, with its exit status.
@Suite("Newcomer mistakes (docs/newcomer-errors.md)", .serialized)
struct NewcomerErrorTests {
    struct Mistake: CustomStringConvertible {
        let title: String
        let command: String
        let status: Int32
        let expected: [String]
        var description: String { title }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func page() throws -> String {
        try String(contentsOf: repository.appendingPathComponent("docs/newcomer-errors.md"), encoding: .utf8)
    }

    /// The fenced blocks of one language in a piece of the page, in order.
    static func blocks(_ language: String, in text: Substring) -> [String] {
        text.components(separatedBy: "```\(language)\n").dropFirst().map { $0.components(separatedBy: "\n```")[0] }
    }

    /// The numbered sections that carry a command and the lines it must print.
    static func mistakes() throws -> [Mistake] {
        let text = try page()
        return text.components(separatedBy: "\n## ").dropFirst().compactMap { section -> Mistake? in
            let body = Substring(section)
            guard let title = section.split(separator: "\n").first, title.first?.isNumber == true,
                let command = blocks("sh", in: body).first, let expected = blocks("text", in: body).first,
                let status = section.firstMatch(of: /Exit status (\d+)/)?.output.1
            else { return nil }
            return Mistake(
                title: String(title), command: command, status: Int32(status)!,
                expected: expected.components(separatedBy: "\n"))
        }
    }

    /// Runs a shell script in a directory with the built `share-recovery` first on PATH.
    static func shell(_ script: String, in directory: URL, environment: [String: String]) throws -> CLIRun {
        let path =
            CLIRunner.productsDirectory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        // Under a time bound, so a mistake that wrongly succeeds (a server that starts) cannot hang the suite.
        return try CLIRunner.run(
            executable: URL(fileURLWithPath: "/usr/bin/timeout"), ["120", "/bin/sh", "-e", "-c", script], in: directory,
            environment: environment.merging(["PATH": path]) { old, _ in old })
    }

    /// A TCP socket listening on a free loopback port; closed by `close()`.
    struct Listener {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(descriptor, raw, length) == 0 && listen(descriptor, 1) == 0
                        && getsockname(descriptor, raw, &length) == 0
                }
            }
            guard bound else { throw CocoaError(.fileWriteUnknown) }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        func close() { _ = Glibc.close(descriptor) }
    }

    @Test("the page names every mistake it tabulates")
    func pageIsComplete() throws {
        let mistakes = try Self.mistakes()
        // Every row of the table runs here but a missing system library, which comes from the compiler.
        let rows = try Self.page().matches(of: /\n\| (\d+) \| .* \| (\S+) \|/).filter { $0.output.2 != "(build)" }
        #expect(rows.count > 11 && mistakes.count == rows.count, "found \(mistakes.map(\.title))")
        for mistake in mistakes {
            #expect(mistake.expected.first?.hasPrefix("error: ") == true, "\(mistake) shows no error line")
        }
    }

    @Test("every mistake prints exactly what the page shows")
    func everyMistakeAsDocumented() throws {
        let directory = try CLIRunner.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let busy = try Listener()
        defer { busy.close() }
        let free = try Listener()
        free.close()
        let ports = ["BUSY_PORT": String(busy.port), "FREE_PORT": String(free.port)]

        let setup = try #require(
            Self.blocks("sh", in: Substring(try Self.page().components(separatedBy: "\n## Setup")[1])).first)
        let prepared = try Self.shell(setup, in: directory, environment: ports)
        try #require(prepared.status == 0, "the setup failed: \(prepared.stderr)")

        for mistake in try Self.mistakes() {
            let run = try Self.shell(mistake.command, in: directory, environment: ports)
            let expected = mistake.expected.map { line in
                ports.reduce(line) { $0.replacingOccurrences(of: "$\($1.key)", with: $1.value) }
            }
            let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let tail = Array(lines.dropLast(lines.last == "" ? 1 : 0).suffix(expected.count))
            #expect(run.status == mistake.status, "\(mistake): exit \(run.status), stderr: \(run.stderr)")
            #expect(tail == expected, "\(mistake)")
        }
    }

    @Test("bootstrap installs every Debian package the system libraries need")
    func bootstrapCoversTheManifest() throws {
        let manifest = try String(contentsOf: Self.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let bootstrap = try String(
            contentsOf: Self.repository.appendingPathComponent("scripts/bootstrap.sh"), encoding: .utf8)
        let needed = manifest.matches(of: /\.apt\(\["([^"]+)"\]\)/).map { String($0.output.1) }
        let installed = try #require(bootstrap.firstMatch(of: /packages=\(([^)]*)\)/)).output.1.split(separator: " ")
            .map(String.init)
        // Every system-library target names its Debian package: the pattern found them all.
        let systemLibraries = manifest.matches(of: /\.systemLibrary\(/).count
        #expect(systemLibraries > 0 && needed.count == systemLibraries, "the manifest names \(needed)")
        for package in needed {
            #expect(installed.contains(package), "scripts/bootstrap.sh does not install \(package)")
        }
    }
}
