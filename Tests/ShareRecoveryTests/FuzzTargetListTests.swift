import Foundation
import Testing

/// Fuzz targets have one list, `fuzzTargets` in Package.swift: scripts/fuzz.sh reads it, and this
/// test holds the places that describe each target (its source folder, docs/fuzzing.md's table) to it.
@Suite("Fuzz targets: one list")
struct FuzzTargetListTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Package.swift's entries as (target without `fuzz-`, folder under Tests/Fuzz), the same pattern
    /// scripts/fuzz.sh reads them with.
    static func declared() throws -> [(name: String, folder: String)] {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        return manifest.matches(of: /"fuzz-([a-z0-9-]+)", "([A-Za-z0-9]+)"/).map {
            (String($0.output.1), String($0.output.2))
        }
    }

    @Test("every declared target has its folder, and every folder but Support is declared")
    func foldersAreTheList() throws {
        let declared = try Self.declared()
        #expect(declared.count >= 1)
        let folders = try FileManager.default.contentsOfDirectory(
            atPath: Self.repository.appendingPathComponent("Tests/Fuzz").path
        ).filter { $0 != "Support" && !$0.hasPrefix(".") }
        #expect(Set(folders) == Set(declared.map(\.folder)))
    }

    @Test("docs/fuzzing.md's Targets table has one row per declared target, in its order")
    func documentedTargetsAreTheList() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("docs/fuzzing.md"), encoding: .utf8)
        let rows = page.matches(of: /\n\| `([a-z0-9-]+)` \| `Tests\/Fuzz\/([A-Za-z0-9]+)` \|/).map {
            "\($0.output.1) \($0.output.2)"
        }
        #expect(rows == (try Self.declared()).map { "\($0.name) \($0.folder)" })
    }

    @Test("scripts/fuzz.sh names no target of its own")
    func scriptReadsTheList() throws {
        let script = try String(contentsOf: Self.repository.appendingPathComponent("scripts/fuzz.sh"), encoding: .utf8)
        #expect(script.contains("Package.swift"))
        let listed = script.split(separator: "\n").filter { line in
            !line.hasPrefix("#") && line.contains("all_targets=(")
        }
        #expect(listed.isEmpty, "\(listed)")
    }
}
