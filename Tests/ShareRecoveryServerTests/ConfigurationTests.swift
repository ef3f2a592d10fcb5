import Foundation
import NIOCore
import AsyncHTTPClient
import Logging
import NIOHTTP1
import ShareCrypto
import ShareRecovery
import ShareRecoveryHTTP
import Testing

@testable import ShareRecoveryServer

/// Configuration parsing, secret loading, and the custodian key at rest.
@Suite("Configuration")
struct ConfigurationTests {
    @Test("PostgreSQL URLs")
    func postgresURLs() throws {
        let full = try PostgresLocation(
            url: "postgres://alice:p%40ss@db.example:6543/recovery?sslmode=disable&schema=tenant_1")
        #expect(full.host == "db.example" && full.port == 6543 && full.username == "alice" && full.password == "p@ss")
        #expect(full.database == "recovery" && !full.preferTLS && full.schema == "tenant_1")
        let short = try PostgresLocation(url: "postgresql://bob@127.0.0.1/db")
        #expect(short.port == 5432 && short.password == nil && short.preferTLS && !short.requireTLS)
        let ipv6 = try PostgresLocation(url: "postgres://u:p@[::1]:5433/db?sslmode=require")
        #expect(ipv6.host == "::1" && ipv6.port == 5433 && ipv6.requireTLS)
        for bad in [
            "mysql://u@h/db", "postgres://h/db", "postgres://u@h", "postgres://u@h:99999/db", "postgres://u@h:x/db",
            "postgres://u@h/db?schema=Bad-Name", "postgres://u@h/db?sslmode=maybe", "postgres://u@h/db?color=blue",
            "postgres://u:%zz@h/db", "postgres://u@/db",
        ] {
            #expect(throws: ServerStartError.self, "\(bad)") { try PostgresLocation(url: bad) }
        }
        // The password never appears in an error.
        do {
            _ = try PostgresLocation(url: "postgres://u:hunter2@h:bad/db")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test("the demo key files are generated once, mode 0600, and reused")
    func demoKeyFiles() async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/demo.sqlite"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var configuration = ServerConfiguration(
            port: 0, database: .sqlite(path: path), otpSender: CapturingOTPSender(), logger: logger)
        configuration.masterKey = .generatedFile(path: path + ".master-key")
        configuration.webhookSecret = .generatedFile(path: path + ".webhook-secret")
        let first = try await RunningServer.start(configuration)
        let key = try await keyOf(first)
        await first.stop()
        for file in [path + ".master-key", path + ".webhook-secret"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.utf8.count == 65 && text.hasSuffix("\n") && Hex.decode(String(text.dropLast())) != nil)
        }
        let masterBefore = try String(contentsOfFile: path + ".master-key", encoding: .utf8)
        // A restart reuses the files, so the custodian key (sealed under the master key) opens again.
        let second = try await RunningServer.start(configuration)
        #expect(try await keyOf(second) == key)
        await second.stop()
        #expect(try String(contentsOfFile: path + ".master-key", encoding: .utf8) == masterBefore)

        // Another master key cannot open the stored custodian key: the server refuses to start.
        configuration.masterKey = .value(SystemRandom().secureBytes(count: 32))
        await #expect(throws: ShareRecoveryError.self) { _ = try await RunningServer.start(configuration) }
    }

    func keyOf(_ server: RunningServer) async throws -> String? {
        try await HTTPClientRequestShim(url: server.baseURL() + "/custodian/key").fetchJSON()?["publicKey"].flatMap {
            if case .string(let text) = $0 { text } else { nil }
        }
    }

    @Test("master keys and webhook secrets from files and the environment")
    func secretSources() throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/key"
        try Data((String(repeating: "Ab", count: 32) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(
            try SecretLoading.masterKeys(.file(path: file)) == [
                SecureBytes(copying: [UInt8](repeating: 0xAB, count: 32))
            ])
        try Data(String(repeating: "ab", count: 31).utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: ServerStartError(.invalidConfiguration, "")) { try SecretLoading.masterKeys(.file(path: file)) }
        try Data(String(repeating: "zz", count: 32).utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: ServerStartError(.invalidConfiguration, "")) { try SecretLoading.masterKeys(.file(path: file)) }
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.masterKeys(.file(path: directory + "/missing"))
        }
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.masterKeys(.value(SecureBytes(zeros: 31)))
        }

        setenv("SHARE_RECOVERY_TEST_KEY", String(repeating: "01", count: 32), 1)
        defer { unsetenv("SHARE_RECOVERY_TEST_KEY") }
        #expect(
            try SecretLoading.masterKeys(.environment(name: "SHARE_RECOVERY_TEST_KEY"))
                == [SecureBytes(copying: [UInt8](repeating: 1, count: 32))])
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.masterKeys(.environment(name: "SHARE_RECOVERY_TEST_UNSET"))
        }

        try Data("short\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            try SecretLoading.webhookSecret(.file(path: file))
        }
        try Data("a long enough webhook secret\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(
            try SecretLoading.webhookSecret(.file(path: file)).values
                == [SecureBytes(copying: Array("a long enough webhook secret".utf8))])
    }

    @Test("PostgreSQL needs an explicit master key")
    func postgresNeedsAKey() async throws {
        let configuration = ServerConfiguration(port: 0, database: .postgres(url: "postgres://u@127.0.0.1:1/db"))
        guard SecretLoading.environment(ServerConfiguration.masterKeyEnvironmentVariable) == nil else { return }
        await #expect(throws: ServerStartError(.invalidConfiguration, "")) {
            _ = try await makeServerApplication(configuration)
        }
    }

    @Test("an unreachable PostgreSQL fails the start at once, with a clear error")
    func unreachablePostgres() async throws {
        let configuration = ServerConfiguration(
            port: 0, database: .postgres(url: "postgres://u:secret-password@127.0.0.1:1/db?sslmode=disable"),
            masterKey: .value(SecureBytes(zeros: 32)), webhookSecret: .value(SecureBytes(zeros: 32)),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        do {
            _ = try await makeServerApplication(configuration)
            Issue.record("started without a database")
        } catch let error as ServerStartError {
            // "At once" is structural, not timed: only the start-up probe (one direct connection, before
            // the pool and its retries exist) words its error this way.
            #expect(error.code == .databaseUnavailable)
            #expect("\(error)".contains("cannot connect to PostgreSQL at 127.0.0.1:1/db"))
            #expect(!"\(error)".contains("secret-password"))
        }
    }

    @Test("tokens: issued, verified, and refused when forged or expired")
    func tokens() throws {
        let authority = TokenAuthority(key: SystemRandom().secureBytes(count: 32))
        let issued = authority.issue(userId: "ü@example.com", purpose: .deleteRecovery, now: 1000, lifetime: 600)
        let verified = try authority.verify(issued.text, now: 1599)
        #expect(
            verified.userId == "ü@example.com" && verified.purpose == .deleteRecovery && verified.id == issued.token.id)
        #expect(throws: APIError.self) { try authority.verify(issued.text, now: 1600) }
        #expect(throws: APIError.self) {
            try TokenAuthority(key: SystemRandom().secureBytes(count: 32)).verify(issued.text, now: 1000)
        }
        let parts = issued.text.split(separator: ".")
        // A payload swapped under the original tag.
        let other = authority.issue(userId: "mallory", purpose: .deleteRecovery, now: 1000, lifetime: 600).text.split(
            separator: ".")
        #expect(throws: APIError.self) { try authority.verify("\(parts[0]).\(other[1]).\(parts[2])", now: 1000) }
        for bad in [
            "", "srt1", "srt1..", "srt2.\(parts[1]).\(parts[2])", issued.text + ".x",
            String(repeating: "a", count: 5000),
        ] {
            #expect(throws: APIError.self) { try authority.verify(bad, now: 1000) }
        }
    }

    @Test("secrets at rest: the AAD binds table and row")
    func atRest() throws {
        let sealer = AtRestSealer(keys: [try DerivedKeys(masterKey: SystemRandom().secureBytes(count: 32))])
        let secret = SecureBytes(copying: Array("a signing share".utf8))
        let sealed = try sealer.seal(secret, table: "signing_shares", row: ["c", "2", "ab"])
        #expect(try sealer.open(sealed, table: "signing_shares", row: ["c", "2", "ab"]) == secret)
        #expect(!Hex.encode(sealed).contains(Hex.encode(Array("a signing share".utf8))))
        for (table, row) in [
            ("signing_shares", ["c", "3", "ab"]), ("server_keys", ["c", "2", "ab"]),
            ("signing_shares", ["c2", "", "ab"]),
        ] {
            #expect(throws: ShareRecoveryError.self) { try sealer.open(sealed, table: table, row: row) }
        }
        var tampered = sealed
        tampered[30] ^= 1
        #expect(throws: ShareRecoveryError.self) {
            try sealer.open(tampered, table: "signing_shares", row: ["c", "2", "ab"])
        }
    }
}

/// A one-off GET without the spec checks of ``TestWorld``.
struct HTTPClientRequestShim {
    let url: String
    func fetchJSON() async throws -> JSONValue? {
        let response = try await TestHTTP.client.execute(.init(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try? StrictJSON.parse(Array(body.readableBytesView))
    }
}
