import Foundation
import Testing

/// Every reference a reader can follow resolves: a `docs/formats.md §N` names a `## N.` heading of
/// docs/formats.md, a repository path names a file or directory that exists, and nothing points at a
/// document that lives outside the repository.
@Suite("Document references")
struct DocumentReferenceTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The top-level folders whose paths a text may cite.
    static let citedFolders = ["docs", "scripts", "Sources", "Tests", "Vectors", "Examples", ".ci", "Benchmarks"]

    /// Names of documents that are not in the repository; spelt in two parts so this file does not
    /// cite them itself.
    static let outsideDocuments = ["FORMATS" + ".md", "STYLE" + ".md", "../" + "shared"]

    /// One broken reference: where it is and what is wrong.
    struct Finding: CustomStringConvertible {
        let file: String
        let line: Int
        let problem: String
        var description: String { "\(file):\(line): \(problem)" }
    }

    /// The repository's tracked files (`git ls-files`), or, outside a git checkout, every file below the
    /// root except build and hidden folders (`.ci` aside).
    static func trackedFiles() throws -> [String] {
        let git = Process()
        git.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        git.arguments = ["git", "-C", repository.path, "ls-files", "-z"]
        let output = Pipe()
        git.standardOutput = output
        git.standardError = FileHandle.nullDevice
        if (try? git.run()) != nil {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            git.waitUntilExit()
            if git.terminationStatus == 0 {
                return String(decoding: data, as: UTF8.self).split(separator: "\0").map(String.init)
            }
        }
        let walker = FileManager.default.enumerator(atPath: repository.path)
        var files: [String] = []
        while let path = walker?.nextObject() as? String {
            let first = path.split(separator: "/").first.map(String.init) ?? path
            if first.hasPrefix(".build") || (first.hasPrefix(".") && first != ".ci") || first == "fuzz-out" {
                walker?.skipDescendants()
                continue
            }
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(
                atPath: repository.appendingPathComponent(path).path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        return files
    }

    /// Files copied from other projects with their vectors (`Tests/<target>/Vectors/<source>/`, each
    /// with its SOURCE.txt): their paths are the upstream repository's, not ours.
    static func isThirdParty(_ file: String) -> Bool {
        (try? /^Tests\/[^\/]+\/Vectors\//.prefixMatch(in: file)) != nil
    }

    /// The section numbers of docs/formats.md: its `## N.` headings.
    static func formatSections() throws -> Set<Int> {
        let page = try String(contentsOf: repository.appendingPathComponent("docs/formats.md"), encoding: .utf8)
        let heading = #/^## (\d+)\. /#
        return Set(
            page.split(separator: "\n").compactMap { line in
                (try? heading.prefixMatch(in: String(line))).flatMap { Int($0.output.1) }
            })
    }

    /// The anchored folders .gitignore names (`/Examples/Sources/readme-snippet/`): what a script
    /// writes at run time, so a path below one is cited rightly though a clean checkout lacks it.
    static let generatedFolders: [String] = {
        let ignore = (try? String(contentsOf: repository.appendingPathComponent(".gitignore"), encoding: .utf8)) ?? ""
        return ignore.split(separator: "\n").compactMap { line in
            line.hasPrefix("/") && line.hasSuffix("/") ? String(line.dropFirst()) : nil
        }
    }()

    /// Whether a cited path exists, from the repository's root or from the citing file's folder (a
    /// package's own README or manifest cites its paths from there), or lies in a generated folder.
    /// Placeholders (`…`, `...`, `<name>`, `*`, `$VAR`) end the checked part, so
    /// `Tests/.../Vectors/<source>/` is checked as `Tests/`.
    static func exists(_ cited: String, citedIn file: String = "") -> Bool {
        var kept: [Substring] = []
        for segment in cited.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.allSatisfy({ $0 == "." }) && segment.count >= 3 { break }
            kept.append(segment)
        }
        let path = kept.joined(separator: "/")
        let folder = file.split(separator: "/").dropLast().joined(separator: "/")
        let candidates = [path] + (folder.isEmpty ? [] : [folder + "/" + path])
        return candidates.contains { candidate in
            FileManager.default.fileExists(atPath: repository.appendingPathComponent(candidate).path)
                || generatedFolders.contains { (candidate + "/").hasPrefix($0) }
        }
    }

    /// The headings of a document of the repository (`## Pair setup` → "Pair setup"), backticks
    /// dropped; nil when there is no such file.
    static func headings(of document: String) -> [String]? {
        guard let page = try? String(contentsOf: repository.appendingPathComponent(document), encoding: .utf8)
        else { return nil }
        return page.split(separator: "\n").filter { $0.hasPrefix("#") }.map {
            $0.drop(while: { $0 == "#" || $0 == " " }).replacingOccurrences(of: "`", with: "")
        }
    }

    /// The broken references in one text.
    static func findings(in text: String, file: String, sections: Set<Int>) -> [Finding] {
        let folders = citedFolders.map { NSRegularExpression.escapedPattern(for: $0) }.joined(separator: "|")
        // A path starts a word (not inside `/abs/docs/…` or `x.docs/`) and ends before a character no
        // path of ours contains; trailing punctuation of the sentence is dropped.
        let pathPattern = try! Regex(
            "(?:^|[^A-Za-z0-9_./-])((?:\(folders))/[A-Za-z0-9_.+/-]*)", as: (Substring, Substring).self)
        let folderMarks = citedFolders.map { $0 + "/" }
        var found: [Finding] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(line)
            for name in outsideDocuments where line.contains(name) {
                found.append(
                    Finding(file: file, line: number + 1, problem: "mentions \(name), which is not in the repository"))
            }
            for match in line.contains("§") ? line.matches(of: /formats\.md\)?,? §(\d+)(?:(?:–|-|–§|-§)(\d+))?/) : [] {
                let first = Int(match.output.1) ?? 0
                let last = match.output.2.flatMap { Int($0) } ?? first
                for section in first...max(first, last) where !sections.contains(section) {
                    found.append(
                        Finding(
                            file: file, line: number + 1,
                            problem: "cites docs/formats.md §\(section), which has no `## \(section).` heading"))
                }
            }
            let mayCite = folderMarks.contains { line.contains($0) }
            for match in mayCite ? line.matches(of: pathPattern) : [] {
                var cited = String(match.output.1)
                while let last = cited.last, ".,:;".contains(last) { cited.removeLast() }
                if !exists(cited, citedIn: file) {
                    found.append(Finding(file: file, line: number + 1, problem: "cites \(cited), which does not exist"))
                }
            }
            // `docs/server.md "Integrator events"`: a section by its title (a missing file is reported above).
            for match in line.contains(".md \"") ? line.matches(of: /(docs\/[A-Za-z0-9_-]+\.md) "([^"$\\]+)"/) : [] {
                let (document, title) = (String(match.output.1), match.output.2.replacingOccurrences(of: "`", with: ""))
                if let titles = headings(of: document), !titles.contains(where: { $0.hasPrefix(title) }) {
                    found.append(
                        Finding(
                            file: file, line: number + 1,
                            problem: "cites \(document) \"\(title)\", which has no such heading"))
                }
            }
        }
        return found
    }

    @Test("every formats.md section, repository path, document and section title a tracked text cites exists")
    func everyReferenceResolves() throws {
        let sections = try Self.formatSections()
        #expect(sections == Set(1...12), "docs/formats.md's sections: \(sections.sorted())")
        var findings: [Finding] = []
        var read = 0
        for file in try Self.trackedFiles() where !Self.isThirdParty(file) {
            guard let data = FileManager.default.contents(atPath: Self.repository.appendingPathComponent(file).path),
                !data.contains(0), let text = String(data: data, encoding: .utf8)
            else { continue }
            read += 1
            findings += Self.findings(in: text, file: file, sections: sections)
        }
        #expect(read > 100, "read only \(read) text files from \(Self.repository.path)")
        #expect(
            findings.isEmpty,
            "\(findings.count) broken references:\n\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test("a broken reference of each kind is found, and only those")
    func brokenReferencesAreFound() {
        // The broken references are assembled here so that this file itself cites nothing broken.
        let section = "§"
        let sources = "Sources"
        let scripts = "scripts"
        let missingSection = "No such" + " section"
        let text = """
            see docs/formats.md \(section)13 and docs/formats.md \(section)11–\(section)14;
            \(sources)/ShareRecovery/NoSuchFile.swift, \(scripts)/missing.sh.
            per \(Self.outsideDocuments[0]) and \(Self.outsideDocuments[2])/spec
            fine: docs/formats.md §4, Tests/.../Vectors/<source>/, `docs/`, /abs/docs/missing.md
            docs/server.md "Integrator events" is fine, docs/server.md "\(missingSection)" is not
            """
        let problems = Self.findings(in: text, file: "sample", sections: Set(1...12)).map(\.problem)
        #expect(
            problems == [
                "cites docs/formats.md \(section)13, which has no `## 13.` heading",
                "cites docs/formats.md \(section)13, which has no `## 13.` heading",
                "cites docs/formats.md \(section)14, which has no `## 14.` heading",
                "cites \(sources)/ShareRecovery/NoSuchFile.swift, which does not exist",
                "cites \(scripts)/missing.sh, which does not exist",
                "mentions \(Self.outsideDocuments[0]), which is not in the repository",
                "mentions \(Self.outsideDocuments[2]), which is not in the repository",
                "cites docs/server.md \"No such section\", which has no such heading",
            ])
    }
}
