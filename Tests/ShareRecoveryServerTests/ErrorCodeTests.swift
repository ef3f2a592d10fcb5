import Foundation
import HTTPTypes
import ShareRecovery
import Testing

@testable import ShareRecoveryHTTP
@testable import ShareRecoveryServer

/// Each module owns its words: the engine's codes, the transport's and the server's wire codes are
/// separate types, they meet only where a name means the same on both sides, and the server's own
/// codes are documented where integrators read them.
@Suite("Error codes by module")
struct ErrorCodeTests {
    static let engineNames = Set(ShareRecoveryError.Code.allCodes.map(\.description))
    static let transportNames = Set(TransportError.Code.allCases.map(\.rawValue))
    static let serverNames = Set(APIErrorCode.serverCodes.map(\.name))

    @Test("the engine has no HTTP words: its codes and the transport's share only conflict")
    func engineAndTransportAreSeparate() {
        #expect(Self.engineNames.intersection(Self.transportNames) == ["conflict"])
        #expect(Self.engineNames.intersection(Self.serverNames).isEmpty)
    }

    @Test("every 4xx refusal of the server reads back as the transport code of the same name")
    func serverRefusalsHaveTransportCodes() {
        // sourceFailure (502), internalError (500) and notReady (503, /ready only) are 5xx: the client
        // retries, then says unavailable.
        let refusals = Self.serverNames.subtracting(["sourceFailure", "internalError", "notReady"])
        #expect(refusals.subtracting(Self.transportNames).isEmpty, "\(refusals.subtracting(Self.transportNames))")
        #expect(
            !Self.serverNames.contains(APIErrorCode.conflict.name),
            "conflict is the engine's code, which the server answers with; not one of its own")
    }

    @Test("an engine code on the wire keeps its name")
    func engineCodesKeepTheirNames() {
        for code in ShareRecoveryError.Code.allCodes {
            #expect(APIErrorCode(code).name == code.description)
            #expect(APIError.clientInput(ShareRecoveryError(code, "x")).code.name == code.description)
        }
        #expect(APIError.clientInput(ShareRecoveryError(.noMatchingShare, "x")).status == .notFound)
        #expect(APIError.clientInput(ShareRecoveryError(.nonceReused, "x")).status == .conflict)
        #expect(APIError.clientInput(ShareRecoveryError(.dealerCheckFailed, "x")).status == .badRequest)
    }

    @Test("docs/server.md and docs/openapi.yaml name every server code")
    func serverCodesAreDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs")
        let server = try String(contentsOf: docs.appendingPathComponent("server.md"), encoding: .utf8)
        let openapi = try String(contentsOf: docs.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        for name in Self.serverNames.sorted() {
            #expect(server.contains("`\(name)`"), "docs/server.md does not name \(name)")
            #expect(openapi.contains(name), "docs/openapi.yaml does not name \(name)")
        }
    }

    /// The codes the server may answer with: its own, its engine codes by name, and every engine
    /// code its sources name (`APIErrorCode(.x)`).
    static func answeredCodes() throws -> Set<String> {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/ShareRecoveryServer")
        var names = serverNames.union([APIErrorCode.malformedInput, .notFound, .conflict].map(\.name))
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            names.formUnion(text.matches(of: /APIErrorCode\(\.(\w+)\)/).map { String($0.output.1) })
        }
        return names
    }

    @Test("every code the server answers with has a row in the one table")
    func everyCodeHasARow() throws {
        let answered = try Self.answeredCodes()
        let missing = answered.subtracting(APIErrorTable.byCode.keys)
        #expect(missing.isEmpty, "no APIErrorTable row for \(missing.sorted())")
        #expect(APIErrorTable.byCode.count == APIErrorTable.rows.count, "a code has two rows")
        #expect(APIError.clientInput(ShareRecoveryError(.authenticationFailed, "x")).status == .badRequest)
    }

    @Test("each row reads back on the client as its mapping says, with the row's hint")
    func rowsReadBackAsMapped() throws {
        for row in APIErrorTable.rows {
            let body = JSONWriter.write(
                .object([("error", .object([("code", .string(row.code)), ("message", .string("m"))]))]))
            let reply = HTTPReply(status: row.status, body: Array(body.utf8))
            let error: any Error =
                row.status == 404 ? ServerErrorMapping.notFound("op", reply) : ServerErrorMapping.rejected("op", reply)
            switch row.client {
            case .engine(let code):
                #expect((error as? ShareRecoveryError)?.code == code, "\(row.code): \(error)")
            case .transport(let code, let hint):
                let transport = try #require(error as? TransportError, "\(row.code): \(error)")
                #expect(transport.code == code && transport.hint == hint, "\(row.code)")
                #expect(!hint.isEmpty)
            case .unavailable:
                #expect(row.status >= 500, "\(row.code): only a 5xx is read as unavailable")
            }
        }
    }

    @Test("docs/openapi.yaml's Error code lists every row with its status, and nothing else")
    func everyRowIsDocumented() throws {
        let node = OpenAPISpec.shared.root["components"]?["schemas"]?["Error"]?["properties"]?["error"]?[
            "properties"]?["code"]?["description"]
        guard case .string(let description)? = node else {
            Issue.record("no description of Error.error.code")
            return
        }
        var documented: [String: Int] = [:]
        for match in description.matches(of: /`(\w+)` (\d{3})/) {
            documented[String(match.output.1)] = Int(match.output.2)
        }
        let fourHundred = try #require(description.components(separatedBy: "400 for ").last)
        for match in fourHundred.matches(of: /`(\w+)`/) { documented[String(match.output.1)] = 400 }
        let table = Dictionary(uniqueKeysWithValues: APIErrorTable.rows.map { ($0.code, $0.status) })
        #expect(documented == table, "docs/openapi.yaml and APIErrorTable differ")
    }
}
