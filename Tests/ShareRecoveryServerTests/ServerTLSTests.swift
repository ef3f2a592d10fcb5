import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// `serve --tls-cert-file/--tls-key-file`: the server terminates TLS itself, with a throwaway CA and
/// certificate made by openssl as .ci/postgres.sh makes its own.
@Suite("Server TLS")
struct ServerTLSTests {
    /// A CA, a server certificate it signed for 127.0.0.1 and localhost, its key, and a second key.
    struct Certificates {
        let directory: String
        var ca: String { directory + "/ca.pem" }
        var certificate: String { directory + "/server.pem" }
        var key: String { directory + "/server.key" }
        var otherKey: String { directory + "/other.key" }

        init() throws {
            directory = TestWorld.makeDirectory()
            let script = """
                set -e
                key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:prime256v1 -out "$1" 2>/dev/null; }
                key ca.key; key server.key; key other.key
                openssl req -x509 -new -key ca.key -subj "/CN=share-recovery test CA" -days 2 -out ca.pem 2>/dev/null
                openssl req -new -key server.key -subj "/CN=localhost" 2>/dev/null |
                    openssl x509 -req -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \\
                    -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n') -out server.pem 2>/dev/null
                """
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script]
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            try process.run()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "openssl could not make the test certificates")
        }
    }

    /// GET `url` with a client trusting `ca` (or the system's roots when `nil`), within `timeout` seconds;
    /// the status, or the error.
    static func get(_ url: String, trusting ca: String?, timeout: Int64 = 10) async -> Result<Int, any Error> {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca {
            do { tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca)) } catch {
                return .failure(error)
            }
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let result: Result<Int, any Error>
        do {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(timeout))
            _ = try await response.body.collect(upTo: 1 << 16)
            result = .success(Int(response.status.code))
        } catch {
            result = .failure(error)
        }
        try? await client.shutdown()
        return result
    }

    @Test(
        "HTTPS with the given certificate; plain HTTP and clients that do not trust it get nothing",
        arguments: TestBackend.allCases)
    func https(backend: TestBackend) async throws {
        let certificates = try Certificates()
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        try await TestWorld.with(backend) { configuration in
            configuration.tls = ServerTLS(certificateFile: certificates.certificate, privateKeyFile: certificates.key)
        } _: { world in
            let base = world.servers[0].baseURL()
            #expect(base == "https://127.0.0.1:\(world.servers[0].port)")
            let port = world.servers[0].port
            for url in [base + "/health", base + "/ready", "https://localhost:\(port)/health"] {
                let status = try await Self.get(url, trusting: certificates.ca).get()
                #expect(status == 200, "\(url)")
            }
            // The system's roots do not know the test CA: the handshake fails, no answer.
            // (The client retries a failed handshake until its deadline: 2 s tell enough.)
            let untrusted = await Self.get(base + "/health", trusting: nil, timeout: 2)
            #expect(throws: (any Error).self) { try untrusted.get() }
            // Plain HTTP on the TLS port gets no HTTP answer.
            let plain = await Self.get("http://127.0.0.1:\(port)/health", trusting: nil, timeout: 2)
            #expect((try? plain.get()) == nil)
        }
    }

    @Test(
        "a missing certificate, a file that is not PEM, or a key of another certificate stops the start, naming the file"
    )
    func refused() async throws {
        let certificates = try Certificates()
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let cases: [(ServerTLS, String)] = [
            (
                ServerTLS(certificateFile: certificates.directory + "/missing.pem", privateKeyFile: certificates.key),
                "missing.pem"
            ),
            (ServerTLS(certificateFile: certificates.key, privateKeyFile: certificates.key), "server.key"),
            (ServerTLS(certificateFile: certificates.certificate, privateKeyFile: certificates.ca), "ca.pem"),
            (ServerTLS(certificateFile: certificates.certificate, privateKeyFile: certificates.otherKey), "other.key"),
        ]
        for (tls, named) in cases {
            do {
                _ = try tls.serverConfiguration()
                Issue.record("\(named) was taken")
            } catch {
                #expect(error.code == .invalidConfiguration && error.reason.contains(named), "\(error)")
                #expect(!error.reason.contains("BEGIN"))
            }
        }
    }
}
