import Foundation
import ShareRecovery
import ShareRecoveryHTTP
import Testing

/// Token purposes have one list, `TokenPurpose`: the server issues and checks exactly those, and
/// docs/openapi.yaml's `TokenPurpose` enum (which scripts/conformance.sh and its hooks read for their
/// groups and flows) must name the same ones in the same order.
@Suite("Token purposes: one list")
struct TokenPurposeListTests {
    @Test("docs/openapi.yaml's TokenPurpose enum is TokenPurpose.allCases")
    func openAPIEnumIsTheList() throws {
        let schema = OpenAPISpec.shared.root["components"]?["schemas"]?["TokenPurpose"]
        guard case .array(let members)? = schema?["enum"] else {
            Issue.record("docs/openapi.yaml has no components.schemas.TokenPurpose.enum")
            return
        }
        let documented = members.compactMap { member -> String? in
            guard case .string(let name) = member else { return nil }
            return name
        }
        #expect(documented == TokenPurpose.allCases.map(\.rawValue))
    }

    @Test("scripts/conformance.sh has one group per token purpose, in the list's order")
    func conformanceGroupsAreThePurposes() throws {
        let path = OpenAPISpec.sourcePath.replacingOccurrences(
            of: "docs/openapi.yaml", with: "scripts/conformance.sh")
        let script = try String(contentsOfFile: path, encoding: .utf8)
        guard let start = script.range(of: "\ngroups = {\n"), let end = script[start.upperBound...].range(of: "\n}\n")
        else {
            Issue.record("scripts/conformance.sh has no `groups = {` table")
            return
        }
        let groups = script[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            (try? /^    "([A-Za-z]+)": \[/.firstMatch(in: String(line))).map { String($0.output.1) }
        }
        #expect(groups == TokenPurpose.allCases.map(\.rawValue))
    }
}
