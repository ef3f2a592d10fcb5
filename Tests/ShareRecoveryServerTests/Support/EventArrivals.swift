import Foundation
import ShareCrypto
import ShareRecovery
import Testing
import TestSupport

@testable import ShareRecoveryServer

/// The integrator events of a run of fault-proxy trials (issue 39): the servers deliver through a fault
/// proxy of their own (resets, lost answers, delays) to the standardwebhooks receiver when a Python with
/// the package is at hand (``StandardWebhooksReceiver``), else to ``EventReceiver`` and its Swift
/// verifier; at the end of the run every event of the trials' accounts must have arrived.
final class EventArrivals: Sendable {
    /// The proxy's URL, which the servers deliver to.
    let url: String
    let secretFile: String
    /// Which receiver verifies, for the run's log line.
    let receiverName: String
    let proxy: FaultProxy
    private let received: @Sendable () -> [EventReceiver.Delivery]

    private init(
        url: String, secretFile: String, receiverName: String, proxy: FaultProxy,
        received: @escaping @Sendable () -> [EventReceiver.Delivery]
    ) {
        self.url = url
        self.secretFile = secretFile
        self.receiverName = receiverName
        self.proxy = proxy
        self.received = received
    }

    /// Every request the receiver has had so far, in arrival order.
    var deliveries: [EventReceiver.Delivery] { received() }

    /// Delivery as a server under trial does it: a short poll and short backoff, so events keep up with
    /// the trials and the wait at the end is short, and attempts no fault can exhaust.
    func configure(_ configuration: inout ServerConfiguration) {
        var events = EventsConfiguration(url: url, secretFile: secretFile, maximumAttempts: 100)
        events.pollMilliseconds = 20
        events.initialBackoffMilliseconds = 10
        events.maximumBackoffMilliseconds = 200
        configuration.events = events
    }

    /// Runs `body` with a receiver behind a fault proxy seeded with `seed`, then stops both.
    static func with<R: Sendable>(seed: UInt64, _ body: (EventArrivals) async throws -> R) async throws -> R {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (secretFile, _, signer) = try EventsTests.secretFile(in: directory)
        if let python = StandardWebhooksReceiver.python() {
            let receiver = try StandardWebhooksReceiver(python: python, secretFile: secretFile, directory: directory)
            defer { receiver.stop() }
            let proxy = try FaultProxy(upstreamPort: receiver.port, seed: seed)
            defer { proxy.stop() }
            let log = receiver.log
            return try await body(
                EventArrivals(
                    url: "http://127.0.0.1:\(proxy.port)/events", secretFile: secretFile,
                    receiverName: "standardwebhooks (Python)", proxy: proxy,
                    received: { StandardWebhooksReceiver.received(log: log).map(EventReceiver.Delivery.init) }))
        }
        let receiver = EventReceiver(signer: signer)
        return try await receiver.runBehindProxy(seed: seed) { url, proxy in
            try await body(
                EventArrivals(
                    url: url, secretFile: secretFile,
                    receiverName: "the Swift verifier (no Python with standardwebhooks)", proxy: proxy,
                    received: { receiver.deliveries }))
        }
    }

    /// Waits, up to `seconds` for the whole run, until every outbox event of `accounts` is delivered and
    /// taken by the receiver, then checks how they arrived (``expectArrived(_:outbox:sourceLocation:)``).
    /// - Returns: The accounts' outbox rows, in commit order.
    @discardableResult
    func expectEveryEventArrived(
        _ world: TestWorld, accounts: [String], seconds: Double = 60,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [OutboxEntry] {
        let storage = try world.inspector()
        defer { Task { await storage.close() } }
        let deadline = Date().addingTimeInterval(seconds)
        var outbox: [OutboxEntry] = []
        while true {
            outbox = []
            for account in accounts {
                outbox += try await storage.outboxEntries(state: nil, account: account, after: 0, limit: 1_000_000)
            }
            let taken = Set(deliveries.filter { (200..<300).contains($0.status) }.map(\.id))
            let done = outbox.allSatisfy { $0.state == .delivered && taken.contains($0.event.id) }
            if done || Date() >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        outbox.sort { $0.event.sequence < $1.event.sequence }
        let undelivered = outbox.filter { $0.state != .delivered }
        #expect(
            undelivered.isEmpty,
            "\(undelivered.count) of \(outbox.count) events not delivered after \(seconds) s: \(undelivered.prefix(3).map { "\($0.event.id) \($0.state) \($0.attempts) \($0.lastError ?? "")" })",
            sourceLocation: sourceLocation)
        Self.expectArrived(deliveries, outbox: outbox, sourceLocation: sourceLocation)
        return outbox
    }

    /// How the events of `outbox` (rows in commit order) must have arrived at a receiver: each one,
    /// verified, with the body made of its row; per account in commit order; a duplicate (an attempt
    /// whose answer was lost) only of the event just taken, with the same webhook-id and body.
    static func expectArrived(
        _ deliveries: [EventReceiver.Delivery], outbox: [OutboxEntry], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let unverified = deliveries.filter { !$0.verified }.count
        #expect(unverified == 0, "\(unverified) deliveries did not verify", sourceLocation: sourceLocation)
        let bodies = Dictionary(outbox.map { ($0.event.id, $0.event.body) }, uniquingKeysWith: { first, _ in first })
        let taken = deliveries.filter { (200..<300).contains($0.status) && bodies[$0.id] != nil }
        let altered = taken.filter { bodies[$0.id] != $0.body }
        #expect(
            altered.isEmpty, "bodies other than the event's: \(altered.prefix(3).map(\.id))",
            sourceLocation: sourceLocation)
        for (account, events) in Dictionary(grouping: outbox, by: \.event.account) {
            var arrived: [String] = []
            for delivery in taken where delivery.account == account && arrived.last != delivery.id {
                arrived.append(delivery.id)
            }
            let expected = events.map(\.event.id)
            let common = min(arrived.count, expected.count)
            let difference = (0..<common).first { arrived[$0] != expected[$0] } ?? common
            #expect(
                arrived == expected,
                "\(account): \(arrived.count) arrivals (duplicates of the last one folded) for \(expected.count) events, first difference at \(difference)",
                sourceLocation: sourceLocation)
        }
    }
}
