#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ShareCrypto

/// A raw TCP server on 127.0.0.1 that answers every request with a head promising more body bytes
/// than it sends, then closes the connection: a connection that dies mid-body.
final class TruncatingServer: Sendable {
    let port: Int
    private let listener: Int32
    private let hitCount = Locked(0)
    private let done = Locked(false)

    /// Starts listening and serving on a thread of its own.
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var actual = sockaddr_in()
        var actualLength = length
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actualLength) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Connections served so far.
    var hits: Int { hitCount.withLock { $0 } }

    /// Stops accepting; the serving thread ends.
    func stop() {
        done.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve() {
        while !done.withLock({ $0 }) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            hitCount.withLock { $0 += 1 }
            // Read the request head, then promise 1000 body bytes and send 20.
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !received.containsHeadEnd {
                let count = read(connection, &buffer, buffer.count)
                guard count > 0 else { break }
                received += buffer[0..<count]
            }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            let response = Array((head + "{\"cipherText\": \"AAAA").utf8)
            _ = response.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            close(connection)
        }
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        count >= 4
            && (0...(count - 4)).contains {
                self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10
            }
    }
}
