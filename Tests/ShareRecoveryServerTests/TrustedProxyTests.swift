import HTTPTypes
import NIOHTTP1
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// `serve --trusted-proxy`: which networks parse, which hop is the client, and that per-address limits
/// then count clients behind a proxy apart (over real sockets), while an untrusted peer's header is ignored.
@Suite("Trusted proxies")
struct TrustedProxyTests {
    @Test(
        "CIDR networks parse to their canonical form",
        arguments: [
            ("10.0.0.0/8", "10.0.0.0/8"), ("192.0.2.10", "192.0.2.10/32"), ("192.0.2.10/32", "192.0.2.10/32"),
            ("fd00::/8", "fd00::/8"), ("2001:DB8:0:0::/32", "2001:db8::/32"), ("::1", "::1/128"),
            ("::ffff:10.0.0.0/104", "10.0.0.0/8"),
        ])
    func parses(cidr: String, canonical: String) throws {
        #expect(try IPNetwork(cidr: cidr).description == canonical)
    }

    @Test(
        "a network that cannot be used is invalidTrustedProxy, saying why",
        arguments: [
            ("10.0.0.0/33", "prefix length"), ("10.0.0.0/", "prefix length"), ("10.0.0.0/+8", "prefix length"),
            ("fd00::/129", "prefix length"), ("10.0.0.1/8", "10.0.0.0/8"), ("fd00::1/8", "fd00::/8"),
            ("0.0.0.0/0", "every address"), ("::/0", "every address"), ("example.com", "not an IPv4 or IPv6"),
            ("10.0.0/8", "not an IPv4 or IPv6"), ("", "not an IPv4 or IPv6"), ("[::1]/128", "not an IPv4 or IPv6"),
            ("::ffff:10.0.0.0/8", "96 or more"),
        ])
    func refuses(cidr: String, reason: String) {
        #expect {
            try IPNetwork(cidr: cidr)
        } throws: { error in
            guard let error = error as? ServerStartError else { return false }
            return error.code == .invalidTrustedProxy && error.reason.contains(reason)
                && error.reason.contains("--trusted-proxy \(cidr):")
        }
    }

    @Test("membership is by prefix and never across families")
    func membership() throws {
        let network = try IPNetwork(cidr: "172.16.0.0/12")
        #expect(network.contains(try #require(IPAddress("172.31.255.255"))))
        #expect(!network.contains(try #require(IPAddress("172.32.0.0"))))
        #expect(network.contains(try #require(IPAddress("::ffff:172.16.0.1"))))
        #expect(!(try IPNetwork(cidr: "::/96")).contains(try #require(IPAddress("0.0.0.1"))))
        #expect(try IPNetwork(cidr: "2001:db8::/127").contains(try #require(IPAddress("2001:db8::1"))))
        #expect(!(try IPNetwork(cidr: "2001:db8::/127")).contains(try #require(IPAddress("2001:db8::2"))))
    }

    static func headers(_ fields: [(String, String)]) -> HTTPFields {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return headers
    }

    static func proxies(_ cidrs: [String], _ header: TrustedProxies.Header = .xForwardedFor) throws -> TrustedProxies {
        TrustedProxies(networks: try cidrs.map { try IPNetwork(cidr: $0) }, header: header)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let trusted: [String]
        let header: TrustedProxies.Header
        let peer: String
        let fields: [(String, String)]
        let client: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "no option: the header is ignored", trusted: [], header: .xForwardedFor, peer: "10.0.0.5",
            fields: [("X-Forwarded-For", "198.51.100.7")], client: "10.0.0.5"),
        Case(
            name: "an untrusted peer's header is ignored", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "203.0.113.9", fields: [("X-Forwarded-For", "198.51.100.7")], client: "203.0.113.9"),
        Case(
            name: "one trusted proxy: the hop it appended", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "198.51.100.7")], client: "198.51.100.7"),
        Case(
            name: "spoofed leftmost entries are ignored", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "1.1.1.1, 2.2.2.2, 198.51.100.7, 10.0.0.9")],
            client: "198.51.100.7"),
        Case(
            name: "several header lines are one list", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "198.51.100.7")],
            client: "198.51.100.7"),
        Case(
            name: "an all-trusted chain: its leftmost hop", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "10.1.1.1, 10.2.2.2")], client: "10.1.1.1"),
        Case(
            name: "a trusted peer without the header is the client", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [], client: "10.0.0.5"),
        Case(
            name: "a malformed hop: the trusted proxy that wrote it", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "198.51.100.7, not-an-address, 10.0.0.9")],
            client: "10.0.0.9"),
        Case(
            name: "an empty element is malformed", trusted: ["10.0.0.0/8"], header: .xForwardedFor, peer: "10.0.0.5",
            fields: [("X-Forwarded-For", "198.51.100.7,")], client: "10.0.0.5"),
        Case(
            name: "IPv6 peer and hops, canonical", trusted: ["fd00::/8"], header: .xForwardedFor, peer: "fd00::1",
            fields: [("X-Forwarded-For", "2001:DB8:0:0:0:0:0:7, fd00::2")], client: "2001:db8::7"),
        Case(
            name: "ports and brackets are dropped", trusted: ["10.0.0.0/8", "fd00::/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "198.51.100.7:4711, [fd00::3]:443")],
            client: "198.51.100.7"),
        Case(
            name: "a mapped IPv4 peer is its IPv4 address", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "::ffff:10.0.0.5", fields: [("X-Forwarded-For", "::ffff:198.51.100.7")], client: "198.51.100.7"),
        Case(
            name: "Forwarded for=, quoted IPv6 with a port", trusted: ["10.0.0.0/8"], header: .forwarded,
            peer: "10.0.0.5",
            fields: [("Forwarded", #"for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.5"#)],
            client: "2001:db8:cafe::17"),
        Case(
            name: "Forwarded: unknown is malformed", trusted: ["10.0.0.0/8"], header: .forwarded, peer: "10.0.0.5",
            fields: [("Forwarded", "for=198.51.100.7, for=unknown")], client: "10.0.0.5"),
        Case(
            name: "Forwarded: the other header is not read", trusted: ["10.0.0.0/8"], header: .forwarded,
            peer: "10.0.0.5", fields: [("X-Forwarded-For", "1.1.1.1"), ("Forwarded", "For=198.51.100.7")],
            client: "198.51.100.7"),
        Case(
            name: "X-Forwarded-For: a client's Forwarded is not read", trusted: ["10.0.0.0/8"], header: .xForwardedFor,
            peer: "10.0.0.5", fields: [("Forwarded", "for=1.1.1.1"), ("X-Forwarded-For", "198.51.100.7")],
            client: "198.51.100.7"),
    ]

    @Test("the client is the rightmost untrusted hop", arguments: cases)
    func hopSelection(_ example: Case) throws {
        let proxies = try Self.proxies(example.trusted, example.header)
        #expect(proxies.clientAddress(peer: example.peer, headers: Self.headers(example.fields)) == example.client)
    }

    @Test(
        "behind a trusted proxy each client has its own per-address limit; an untrusted peer's header changes nothing",
        arguments: TestBackend.allCases)
    func limitsPerClient(backend: TestBackend) async throws {
        let limits = ServerConfiguration.RateLimits(
            verifyPerIdentifier: .init(limit: 100, windowSeconds: 600),
            verifyPerAddress: .init(limit: 100, windowSeconds: 600),
            flowCreationPerIdentifier: .init(limit: 100, windowSeconds: 600),
            flowCreationPerAddress: .init(limit: 2, windowSeconds: 600))
        // Three flows from each of two clients, with a spoofed leftmost hop that differs every time.
        func statuses(_ world: TestWorld) async throws -> [String: [Int]] {
            var answers: [String: [Int]] = [:]
            for round in 0..<3 {
                for client in ["198.51.100.1", "198.51.100.2"] {
                    let response = try await world.send(
                        .POST, "/recovery/flows", json: .object([("identifier", .string("u-\(client)-\(round)"))]),
                        headers: [("X-Forwarded-For", "203.0.113.\(round), \(client)")])
                    answers[client, default: []].append(response.status)
                }
            }
            return answers
        }
        // The test's requests come from 127.0.0.1: trusted in the first world, not in the second.
        let worlds: [(TrustedProxies, [Int])] = [
            (try Self.proxies(["127.0.0.0/8"]), [201, 201, 429]), (try Self.proxies(["10.0.0.0/8"]), [201, 429, 429]),
        ]
        for (proxies, expected) in worlds {
            try await TestWorld.with(
                backend,
                configure: {
                    $0.rateLimits = limits
                    $0.trustedProxies = proxies
                }
            ) { world in
                world.clock.alignToWindow(600)
                let answers = try await statuses(world)
                #expect(answers == ["198.51.100.1": expected, "198.51.100.2": expected], "\(proxies.networks)")
            }
        }
    }
}
