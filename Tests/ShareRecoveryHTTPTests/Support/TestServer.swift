import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShareRecoveryHTTP
import ShareCrypto

/// A Hummingbird server on 127.0.0.1 with an ephemeral port, alive for the duration of `body`.
enum TestServer {
    /// Runs `body` with the server's base URL (`http://127.0.0.1:<port>`), then stops the server.
    static func with<R: Sendable>(
        _ configure: (Router<BasicRequestContext>) -> Void, _ body: (String) async throws -> R
    ) async throws -> R {
        let router = Router()
        configure(router)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: Logger(label: "test-server", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw TestServerError.noPort
            }
            do {
                let result = try await body("http://127.0.0.1:\(port)")
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    enum TestServerError: Error { case noPort }

    /// A JSON response.
    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The API's error body.
    static func error(_ status: HTTPResponse.Status, code: String, message: String = "test") -> Response {
        json("{\"error\":{\"code\":\"\(code)\",\"message\":\"\(message)\"}}", status: status)
    }

    /// A request body as bytes.
    static func body(_ request: Request) async throws -> [UInt8] {
        Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
    }
}

/// Counts requests a handler served.
final class HitCounter: Sendable {
    private let count = Locked(0)

    /// Counts one hit and returns the new total.
    @discardableResult func hit() -> Int {
        count.withLock {
            $0 += 1; return $0
        }
    }
    var value: Int { count.withLock { $0 } }
}

extension HTTPField.Name {
    static let webhookSecret = HTTPField.Name("X-Webhook-Secret")!
}

/// What a handler saw of each request.
final class RequestLog: Sendable {
    struct Entry: Equatable, Sendable {
        let path: String
        let query: String
        let authorization: String
    }

    private let log = Locked<[Entry]>([])

    func record(path: String, query: String, authorization: String) {
        log.withLock { $0.append(Entry(path: path, query: query, authorization: authorization)) }
    }

    var entries: [Entry] { log.withLock { $0 } }
}

/// The purposes a token provider was asked for.
final class PurposeLog: Sendable {
    private let log = Locked<[TokenPurpose]>([])

    func record(_ purpose: TokenPurpose) { log.withLock { $0.append(purpose) } }
    var all: [TokenPurpose] { log.withLock { $0 } }
}
