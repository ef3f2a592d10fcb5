import Foundation
import Testing

/// docs/architecture.md's module table is the rule: every source file of a module imports only
/// what its row allows (only ShareCrypto calls C; the engine pulls in no networking).
@Suite("Architecture: module imports")
struct ArchitectureTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Platform and standard-library modules any source may use.
    static let everywhere: Set<String> = [
        "Foundation", "FoundationEssentials", "Glibc", "Darwin", "Dispatch", "Synchronization",
    ]

    /// Module → the modules its row allows, read from the table (names in backticks).
    static func allowedImports() throws -> [String: Set<String>] {
        let page = try String(contentsOf: repository.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var rules: [String: Set<String>] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3 else { continue }
            let names = { (cell: String) in Set(cell.matches(of: /`([A-Za-z0-9_-]+)`/).map { String($0.output.1) }) }
            guard let module = names(cells[0]).first else { continue }
            rules[module] = names(cells[2])
        }
        return rules
    }

    /// The modules a Swift file imports, however the import is qualified.
    static func imports(of file: URL) throws -> Set<String> {
        let text = try String(contentsOf: file, encoding: .utf8)
        let pattern =
            /^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:public |package |internal |private |fileprivate )?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z0-9_]+)/
        return Set(
            text.split(separator: "\n").compactMap { line in (try? pattern.firstMatch(in: String(line)))?.output.1 }
                .map(String.init))
    }

    @Test("every module imports only what docs/architecture.md allows")
    func importsFollowTheTable() throws {
        let rules = try Self.allowedImports()
        #expect(rules.count == 7, "the table has rows for \(rules.keys.sorted())")
        #expect(rules["ShareRecovery"] == ["ShareCrypto"], "the engine's row changed: \(rules["ShareRecovery"] ?? [])")
        for (module, allowed) in rules {
            let directory = Self.repository.appendingPathComponent("Sources/\(module)")
            let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
            #expect(!files.isEmpty, "Sources/\(module) has no Swift files")
            for file in files {
                let outside = try Self.imports(of: file).subtracting(allowed).subtracting(Self.everywhere)
                #expect(outside.isEmpty, "\(module)/\(file.lastPathComponent) imports \(outside.sorted())")
            }
        }
    }

    @Test("the import reader sees qualified imports")
    func importReader() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID()).swift")
        defer { try? FileManager.default.removeItem(at: file) }
        try """
        public import ShareCrypto
        @preconcurrency internal import NIOCore
        import struct Logging.Logger
        #if canImport(Glibc)
            import Glibc
        #endif
        // import NotAnImport
        """.write(to: file, atomically: true, encoding: .utf8)
        #expect(try Self.imports(of: file) == ["ShareCrypto", "NIOCore", "Logging", "Glibc"])
    }
}
