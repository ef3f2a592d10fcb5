#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareRecovery
import Testing

/// `share-recovery serve` and SIGTERM, as an orchestrator stops it: a request in flight when the
/// signal arrives still gets its whole answer, new connections are refused from then on, and the
/// process exits 0.
@Suite("serve shuts down gracefully on SIGTERM")
struct GracefulShutdownCLITests {
    /// A TCP connection to 127.0.0.1:`port`, or `nil` when it is refused.
    static func connect(port: Int) -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected != 0 {
            close(socket)
            return nil
        }
        return socket
    }

    static func send(_ socket: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection (or 10 s pass).
    static func readToEnd(_ socket: Int32) -> String {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// The status of `GET path` on a fresh connection, `nil` when the connection is refused.
    static func status(port: Int, _ path: String) -> Int? {
        guard let socket = connect(port: port) else { return nil }
        defer { close(socket) }
        send(socket, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let answer = readToEnd(socket)
        guard answer.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(answer.dropFirst(9).prefix(3))
    }

    @Test("SIGTERM fails /ready for the drain while /health still answers, then exits 0", .timeLimit(.minutes(2)))
    func sigtermDrains() throws {
        let drain = 3.0
        let server = try MethodsCLITests.ServerProcess(
            directory: try CLIRunner.temporaryDirectory(), drainSeconds: Int(drain))
        let process = server.process
        let port = try #require(URLComponents(string: server.base)?.port)
        #expect(Self.status(port: port, "/ready") == 200)

        let signalled = Date()
        kill(process.processIdentifier, SIGTERM)
        var ready = Self.status(port: port, "/ready")
        while ready == 200 && Date().timeIntervalSince(signalled) < 1 {
            usleep(20_000)
            ready = Self.status(port: port, "/ready")
        }
        #expect(ready == 503, "/ready answered \(String(describing: ready)) after SIGTERM")
        #expect(Self.status(port: port, "/health") == 200)

        // The listener stays open for the drain, then closes.
        var refusedAfter: Double?
        while Date().timeIntervalSince(signalled) < drain + 5 {
            if Self.status(port: port, "/health") == nil {
                refusedAfter = Date().timeIntervalSince(signalled)
                break
            }
            usleep(50_000)
        }
        let closed = try #require(refusedAfter, "the listener was still open \(drain + 5) s after SIGTERM")
        #expect(closed >= drain - 0.5, "the listener closed \(closed) s after SIGTERM, before the drain ended")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }

    @Test("a request in flight at SIGTERM is answered; new connections are refused; exit 0", .timeLimit(.minutes(2)))
    func sigtermFinishesInFlight() throws {
        let server = try MethodsCLITests.ServerProcess(directory: try CLIRunner.temporaryDirectory())
        let process = server.process
        guard let port = URLComponents(string: server.base)?.port else {
            Issue.record("no port in \(server.base)")
            return
        }

        // A request whose body is half sent: in flight until the rest arrives.
        let body = #"{"identifier":"alice-shutdown","purpose":"recover"}"#
        let inFlight = try #require(Self.connect(port: port))
        defer { close(inFlight) }
        Self.send(
            inFlight,
            "POST /recovery/flows HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body.prefix(10))
        usleep(200_000)

        kill(process.processIdentifier, SIGTERM)
        // From the signal on, nobody new gets in (allow the server a moment to stop its listener).
        var refused = false
        for _ in 0..<50 {
            if let late = Self.connect(port: port) {
                close(late)
                usleep(20_000)
            } else {
                refused = true
                break
            }
        }
        #expect(refused, "a new connection was still accepted a second after SIGTERM")
        #expect(process.isRunning, "the server exited with a request in flight")

        // The rest of the body: the request completes with the server's whole answer.
        Self.send(inFlight, String(body.dropFirst(10)))
        let answer = Self.readToEnd(inFlight)
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer)")
        #expect(answer.contains("\"flowId\""), "\(answer)")

        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
