import Foundation
import Hummingbird
import Logging
import ShareCrypto
import ShareRecovery
import Testing

@testable import ShareRecoveryServer

/// What "How to add a protocol" (docs/architecture.md) asks of a new kind of protocol session, checked
/// for every case of ``ProtocolSessionRecord/Kind``: a keeper that claims it, a route that opens it,
/// audit events that tell it, and the metric series those events and its start count into.
@Suite("Protocol session kinds")
struct ProtocolSessionKindTests {
    @Test("every kind has a keeper that claims it, and no keeper claims a kind it does not keep")
    func keepers() {
        for kind in ProtocolSessionRecord.Kind.allCases {
            #expect(kind.keeper.sessionKinds.contains(kind), "\(kind) is not among \(kind.keeper)'s kinds")
        }
        let keepers: [any ProtocolSessionKeeping.Type] = [
            CustodianSessions.self, WalletSessions.self, DeviceSessions.self,
        ]
        for keeper in keepers {
            for kind in keeper.sessionKinds {
                #expect(
                    ObjectIdentifier(kind.keeper) == ObjectIdentifier(keeper),
                    "\(keeper) claims \(kind), which \(kind.keeper) opens")
            }
        }
    }

    @Test("every kind's opening route is mounted by the server's routes")
    func routes() async throws {
        let directory = TestWorld.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let masterKey = SystemRandom().secureBytes(count: 32)
        let database = ServerConfiguration.Database.sqlite(path: directory + "/server.sqlite")
        let otp = CapturingOTPSender()
        var logger = Logger(label: "protocol-session-kinds")
        logger.logLevel = .critical
        let configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, database: database, masterKey: .value(masterKey),
            webhookSecret: .value(SecureBytes(copying: Array("webhook-secret".utf8))), otpSender: otp, logger: logger)
        let storage = try SQLiteStorage(path: directory + "/server.sqlite")
        let state = ServerState(
            configuration: configuration, storage: storage, keys: [try DerivedKeys(masterKey: masterKey)],
            webhookSecret: try SecretRing([SecureBytes(copying: Array("webhook-secret".utf8))], what: "test"),
            otpSender: otp,
            custodianKey: SealingKeyPair())
        let router = Router(context: ServerRequestContext.self)
        ServerRoutes(state: state).register(on: router)
        let mounted = Set(
            router.routes.map { route in
                "\(route.method) /" + route.path.description.split(separator: "/").joined(separator: "/")
            })
        await storage.close()
        for kind in ProtocolSessionRecord.Kind.allCases {
            let (method, path) = kind.openingRoute
            #expect(mounted.contains("\(method) \(path)"), "no route opens a \(kind) session: \(method) \(path)")
            #expect(OpenAPITests.contract.contains("\(method) \(path)"), "\(method) \(path) is not in the contract")
        }
    }

    @Test("every kind's completion is audited and counted as completed under each of its metric names")
    func completionsAreAuditedAndCounted() {
        for kind in ProtocolSessionRecord.Kind.allCases {
            #expect(!kind.completionEvents.isEmpty, "\(kind) has no audit event for its completion")
            let counted = Self.countedSeries(kind.completionEvents)
            for name in kind.metricProtocols {
                #expect(counted.contains(Series(protocolName: name, event: "completed")), "\(kind): \(name)")
            }
        }
    }

    @Test("every kind's start is counted once: from its audit row, or by the keeper when it has none")
    func startsAreCountedOnce() {
        let fromAudit = Self.countedSeries(AuditEventKind.allCases)
        for kind in ProtocolSessionRecord.Kind.allCases {
            for name in kind.metricProtocols {
                let started = Series(protocolName: name, event: "started")
                #expect(
                    fromAudit.contains(started) == kind.startIsAudited,
                    "\(kind): an audited start is counted from its row; an unaudited one only by the keeper")
            }
        }
    }

    /// A series of `share_recovery_sessions_total`, by its `protocol` and `event` labels.
    struct Series: Hashable {
        let protocolName: String
        let event: String
    }

    /// The session series that committing one event of each kind counts.
    static func countedSeries(_ kinds: [AuditEventKind]) -> Set<Series> {
        let metrics = ServerMetrics()
        let origin = AuditOrigin(requestId: "r", at: 0)
        metrics.committed(kinds.map { origin.event($0, account: "a") })
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        var series: Set<Series> = []
        for line in exposition.split(separator: "\n") where line.hasPrefix("share_recovery_sessions_total{") {
            guard let open = line.firstIndex(of: "{"), let close = line.firstIndex(of: "}") else { continue }
            var labels: [String: String] = [:]
            for pair in line[line.index(after: open)..<close].split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            if let name = labels["protocol"], let event = labels["event"] {
                series.insert(Series(protocolName: name, event: event))
            }
        }
        return series
    }
}
