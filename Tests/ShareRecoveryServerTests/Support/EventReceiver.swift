import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShareCrypto
import ShareRecovery
import TestSupport

@testable import ShareRecoveryServer

/// An integrator's events endpoint on 127.0.0.1: records every delivery with whether its Standard
/// Webhooks signature verifies, and answers what ``answer`` says (204 by default).
final class EventReceiver: Sendable {
    struct Delivery: Sendable {
        let id: String
        let timestamp: String
        let signature: String
        let body: String
        let verified: Bool
        /// What the receiver answered.
        var status = 0

        var json: JSONValue? { try? StrictJSON.parse(body) }

        var account: String? {
            guard case .string(let account)? = json?["account"] else { return nil }
            return account
        }
        var type: String? {
            guard case .string(let type)? = json?["type"] else { return nil }
            return type
        }
    }

    private let signer: StandardWebhooksSigner
    private let log = Locked<[Delivery]>([])
    private let answerFor = Locked<@Sendable (Delivery) -> Int>({ _ in 204 })

    init(signer: StandardWebhooksSigner) { self.signer = signer }

    /// Every request received, in arrival order.
    var deliveries: [Delivery] { log.withLock { $0 } }

    /// The requests answered 2xx: what the receiver took.
    var taken: [Delivery] { log.withLock { $0 }.filter { (200..<300).contains($0.status) } }

    /// Sets the status answered to each delivery as it arrives.
    func answer(_ decide: @escaping @Sendable (Delivery) -> Int) { answerFor.withLock { $0 = decide } }

    private func answer(_ delivery: Delivery) -> Int { answerFor.withLock { $0 }(delivery) }

    /// Waits until `condition` holds of the deliveries, polling every 20 ms up to `seconds`.
    func wait(seconds: Double = 10, until condition: ([Delivery]) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(deliveries) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition(deliveries)
    }

    /// Runs `body` with the receiver listening at the URL it is given, then stops it.
    func run<R: Sendable>(_ body: (String) async throws -> R) async throws -> R {
        let router = Router()
        router.post("/events") { request, _ -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let text = String(buffer: bytes)
            func header(_ name: String) -> String { request.headers[HTTPField.Name(name)!] ?? "" }
            var delivery = Delivery(
                id: header("webhook-id"), timestamp: header("webhook-timestamp"),
                signature: header("webhook-signature"),
                body: text,
                verified: Int64(header("webhook-timestamp")).map {
                    self.signer.verifies(
                        header: header("webhook-signature"), id: header("webhook-id"), timestamp: $0, body: text)
                } ?? false)
            delivery.status = self.answer(delivery)
            self.log.withLock { [delivery] in $0.append(delivery) }
            return Response(status: .init(code: delivery.status))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: Logger(label: "event-receiver", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw ReceiverError()
            }
            defer { group.cancelAll() }
            return try await body("http://127.0.0.1:\(port)/events")
        }
    }

    /// Runs `body` with the receiver listening behind a ``FaultProxy`` seeded with `seed`; `body` gets
    /// the proxy's events URL and the proxy. Both stop afterwards.
    func runBehindProxy<R: Sendable>(
        seed: UInt64, rates: FaultProxy.Rates = FaultProxy.Rates(), _ body: (String, FaultProxy) async throws -> R
    ) async throws -> R {
        try await run { url in
            guard let port = URLComponents(string: url)?.port else { throw ReceiverError() }
            let proxy = try FaultProxy(upstreamPort: port, seed: seed, rates: rates)
            defer { proxy.stop() }
            return try await body("http://127.0.0.1:\(proxy.port)/events", proxy)
        }
    }

    struct ReceiverError: Error {}
}

extension EventReceiver.Delivery {
    /// A request the standardwebhooks receiver logged: taken (204) when it verified, else refused (401).
    init(_ received: StandardWebhooksReceiver.Received) {
        self.init(
            id: received.id, timestamp: "", signature: "", body: received.body, verified: received.verified,
            status: received.verified ? 204 : 401)
    }
}
