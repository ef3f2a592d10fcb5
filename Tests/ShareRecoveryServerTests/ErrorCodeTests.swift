import Foundation
import HTTPTypes
import ShareRecovery
import ShareRecoveryHTTP
import Testing

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
}
