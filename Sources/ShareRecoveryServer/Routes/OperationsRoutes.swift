import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ShareCrypto
import ShareRecovery

/// What an operator's probes and scrapers call: `/health` (liveness), `/ready` (readiness) and
/// `/metrics` (Prometheus).
extension ServerRoutes {
    /// How long `/ready` waits for the database before it answers 503: a probe must not hang on a
    /// database that does not answer.
    static let readinessTimeout: Duration = .seconds(2)

    func registerOperations(on router: Router<ServerRequestContext>) {
        // Liveness: the process serves HTTP. It never touches the database, so a database outage
        // does not get the process restarted (that is readiness's job: stop sending traffic).
        router.get("/health") { _, _ in JSONResponse.json(.object([("status", .string("ok"))])) }
        router.get("/ready") { _, _ in try await ready() }
        router.get("/metrics") { request, _ in try metrics(request) }
    }

    /// `GET /ready` → 200 `{"status": "ready"}` when the database answers within
    /// ``readinessTimeout`` and holds every migration this build knows; else 503 `notReady` with
    /// the reason (the error itself goes to the log only). 503 too from SIGTERM on (``ServerDrain``).
    func ready() async throws -> Response {
        if state.drain.isDraining {
            throw APIError(.serviceUnavailable, .notReady, "the server is shutting down")
        }
        let storage = state.storage
        let missing: Result<Int, any Error> = await withTaskGroup(of: Result<Int, any Error>?.self) { group in
            group.addTask {
                do {
                    return .success(try await storage.read { try await Migrations.missing(in: $0) })
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: Self.readinessTimeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(ReadinessTimeout())
        }
        switch missing {
        case .success(0):
            return JSONResponse.json(.object([("status", .string("ready"))]))
        case .success(let count):
            throw APIError(.serviceUnavailable, .notReady, "the database lacks \(count) migration(s) this server needs")
        case .failure(let error):
            state.logger.warning("readiness: the database did not answer", metadata: ["error": "\(error)"])
            throw APIError(.serviceUnavailable, .notReady, "the database cannot be reached")
        }
    }

    private struct ReadinessTimeout: Error, CustomStringConvertible {
        var description: String { "no answer within \(ServerRoutes.readinessTimeout)" }
    }

    /// `GET /metrics` (`Authorization: Bearer <metrics token>`) → the Prometheus text exposition.
    /// 404 when no metrics token is configured (the route is off); 401 for a missing or wrong token.
    func metrics(_ request: Request) throws(APIError) -> Response {
        guard let expected = state.metricsToken else { throw APIError.notFound("no such route") }
        guard let credential = Self.bearerCredential(request),
            // Constant time (SecretRing.accepts).
            expected.accepts(SecureBytes(copying: Array(credential.utf8)))
        else { throw APIError.unauthorized("the metrics token is missing or wrong") }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: state.metrics.exposition())))
    }
}
