public import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
public import ServiceLifecycle
import ShareCrypto
import ShareRecovery
import UnixSignals

/// The Hummingbird application type of the reference server.
public typealias ShareRecoveryServerApplication = Application<RouterResponder<ServerRequestContext>>

/// Builds the reference server: opens (and migrates) the database, loads or creates the custodian key, and
/// wires every route. Run the result with `runService()` or inside a `ServiceGroup`.
///
/// - Parameters:
///   - configuration: The server's configuration.
///   - onStarted: Called with the bound port once the server accepts connections.
/// - Returns: The application; its services close the database when it shuts down.
/// - Throws: ``ServerStartError`` `invalidConfiguration` for a bad configuration (missing master key,
///   malformed PostgreSQL URL), or the database's error when it cannot be opened or migrated.
public func makeServerApplication(
    _ configuration: ServerConfiguration, onStarted: @escaping @Sendable (Int) -> Void = { _ in }
) async throws -> ShareRecoveryServerApplication {
    try await makeServerApplication(configuration, drain: ServerDrain(), onStarted: onStarted)
}

/// ``makeServerApplication(_:onStarted:)`` whose `/ready` fails once `drain` begins.
func makeServerApplication(
    _ configuration: ServerConfiguration, drain: ServerDrain, onStarted: @escaping @Sendable (Int) -> Void
) async throws -> ShareRecoveryServerApplication {
    let masterKeySource: ServerConfiguration.SecretSource
    let webhookSecretSource: ServerConfiguration.SecretSource
    let storage: any ServerStorage
    switch configuration.database {
    case .sqlite(let path):
        masterKeySource =
            configuration.masterKey
            ?? defaultSource(
                ServerConfiguration.masterKeyEnvironmentVariable, demoFile: path + ".master-key")
        webhookSecretSource =
            configuration.webhookSecret
            ?? defaultSource(
                ServerConfiguration.webhookSecretEnvironmentVariable, demoFile: path + ".webhook-secret")
        storage = try SQLiteStorage(path: path)
    case .postgres(let url):
        let location = try PostgresLocation(url: url)
        guard
            let master = configuration.masterKey ?? environmentSource(ServerConfiguration.masterKeyEnvironmentVariable)
        else {
            throw ServerStartError(
                .invalidConfiguration,
                "with PostgreSQL the master key must be given (a file, or \(ServerConfiguration.masterKeyEnvironmentVariable))"
            )
        }
        guard
            let secret = configuration.webhookSecret
                ?? environmentSource(ServerConfiguration.webhookSecretEnvironmentVariable)
        else {
            throw ServerStartError(
                .invalidConfiguration,
                "with PostgreSQL the webhook secret must be given (a file, or \(ServerConfiguration.webhookSecretEnvironmentVariable))"
            )
        }
        masterKeySource = master
        webhookSecretSource = secret
        storage = PostgresStorage(
            location: try configuration.postgres.applied(to: location), settings: configuration.postgres,
            logger: configuration.logger)
    }
    do {
        let masterKeys = try SecretLoading.masterKeys(masterKeySource)
        let keys = try masterKeys.map { key throws(ServerStartError) in try DerivedKeys(masterKey: key) }
        let webhookSecret = try SecretLoading.webhookSecret(webhookSecretSource)
        let metricsToken = try configuration.metricsToken.map { source throws(ServerStartError) in
            try SecretLoading.webhookSecret(source, what: "the metrics token")
        }
        let tls = try configuration.tls.map { tls throws(ServerStartError) in try tls.serverConfiguration() }
        let eventsSigner = try configuration.events.map { events throws(ServerStartError) in
            try EventDelivery.validate(events)
            return try StandardWebhooksSigner(secretFile: events.secretFile)
        }
        try await openSchema(storage, configuration: configuration)
        let sealer = AtRestSealer(keys: keys)
        let custodianKey = try await ServerState.loadCustodianKey(
            storage: storage, sealer: sealer,
            now: storage.currentTime(
                processClock: configuration.clock, databaseOffset: configuration.databaseClockOffset()))
        let state = ServerState(
            configuration: configuration, storage: storage, keys: keys, webhookSecret: webhookSecret,
            otpSender: configuration.otpSender ?? FileOTPSender(path: "share-recovery-otp.jsonl"),
            custodianKey: custodianKey, metricsToken: metricsToken, drain: drain)
        // Key ids only, never a value: what an operator compares across processes (docs/server.md,
        // "Rotating secrets").
        let masterKeyIds: [(secret: String, keyId: String, values: Int)] = [
            ("masterKey", SecretRing.keyId(of: masterKeys[0]), masterKeys.count)
        ]
        let keyIds: [(secret: String, keyId: String, values: Int)] =
            masterKeyIds + [("webhookSecret", webhookSecret.keyId, webhookSecret.values.count)]
            + (metricsToken.map { [("metricsToken", $0.keyId, $0.values.count)] } ?? [])
            + (eventsSigner.map { [("eventsSecret", $0.keyId, $0.count)] } ?? [])
            + ((configuration.otpSender as? WebhookOTPSender).map {
                [("otpWebhookSecret", $0.keyId, $0.secretCount)]
            } ?? [])
        for key in keyIds { state.metrics.secret(key.secret, keyId: key.keyId, values: key.values) }

        let router = Router(context: ServerRequestContext.self)
        // First: its span covers every other middleware, and the webhook calls a route makes are its children.
        router.add(middleware: RequestTracingMiddleware())
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: RequestTimeMiddleware())
        // Outside the error middleware: a request is counted with the status its client got.
        router.add(middleware: RequestMetricsMiddleware(metrics: state.metrics))
        router.add(middleware: ErrorMiddleware(logger: configuration.logger))
        // Inside the error middleware, so that it keeps the very answer the client gets.
        router.add(middleware: IdempotencyMiddleware(state: state))
        ServerRoutes(state: state).register(on: router)
        // After every route: it then runs only where no route took the request (MethodNotAllowedMiddleware.swift).
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        var services: [any Service] = [
            StorageService(storage: storage),
            // After the storage's service, so it stops first.
            AuditAnchoring(
                storage: storage,
                now: {
                    try await storage.currentTime(
                        processClock: configuration.clock, databaseOffset: configuration.databaseClockOffset())
                }, logger: configuration.logger),
        ]
        if let events = configuration.events, let eventsSigner {
            // After the storage's service: services stop in reverse order, so the worker stops first.
            services.append(
                EventDelivery(
                    storage: state.storage, configuration: events,
                    signer: eventsSigner, metrics: state.metrics,
                    logger: configuration.logger))
        }
        return Application(
            router: router,
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            services: services,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                state.serverStarted(port: port)
                var metadata: Logger.Metadata = ["port": "\(port)"]
                for key in keyIds { metadata["\(key.secret)KeyId"] = "\(key.keyId)" }
                configuration.logger.info("share-recovery server listening", metadata: metadata)
                onStarted(port)
            },
            logger: configuration.logger)
    } catch {
        await storage.close()
        throw error
    }
}

/// Migrates SQLite, and PostgreSQL when ``PostgresSettings/migrateAtStart`` says so; otherwise refuses a
/// PostgreSQL database that lacks a migration of this build, and starts on one a newer release migrated.
private func openSchema(_ storage: any ServerStorage, configuration: ServerConfiguration) async throws {
    guard let postgres = storage as? PostgresStorage, !configuration.postgres.migrateAtStart else {
        try await storage.migrate()
        return
    }
    switch try await postgres.schemaState() {
    case .current: break
    case .newer(let versions):
        configuration.logger.notice(
            "the database has migrations of a newer release; this release runs on it",
            metadata: ["versions": "\(versions)"])
    case .behind(let missing):
        let what =
            missing == Migrations.all.count
            ? "has none of this build's \(missing) migrations (it was never migrated)"
            : "lacks \(missing) of this build's \(Migrations.all.count) migrations (its last migration was by an older release)"
        throw ServerStartError(
            .databaseNotMigrated,
            "the PostgreSQL database \(what): run `share-recovery migrate --database …` with this release first, or start `serve` with --migrate"
        )
    }
}

/// Runs the reference server until SIGINT or SIGTERM, then drains for ``ServerConfiguration/drainSeconds``
/// (`/ready` answers 503, everything else still serves) and shuts down gracefully within
/// ``ServerConfiguration/shutdownGraceSeconds``.
/// - Parameters:
///   - configuration: The server's configuration.
///   - services: Services to run beside the server and stop with it (the OTLP exporter of
///     ``ServerTracing/bootstrap(logger:)``); they are started first and shut down last.
///   - onStarted: Called with the bound port once the server accepts connections (the CLI prints it).
/// - Throws: As ``makeServerApplication(_:onStarted:)``, or when the address cannot be bound.
public func runServer(
    _ configuration: ServerConfiguration, services: [any Service] = [],
    onStarted: @escaping @Sendable (Int) -> Void = { _ in }
) async throws {
    guard (0...60).contains(configuration.drainSeconds) else {
        throw ServerStartError(.invalidConfiguration, "drainSeconds (serve --drain-seconds) must be 0 to 60")
    }
    let drain = ServerDrain()
    let application = try await makeServerApplication(configuration, drain: drain, onStarted: onStarted)
    // SIGTERM or SIGINT: fail /ready for the drain (DrainService, last so that it stops first), then stop
    // accepting, let requests in flight finish (each is one step of a session, whose state is already in
    // the database between steps), then close the database. A request still running at the deadline is
    // cancelled, so a stuck client cannot hold a deploy hostage.
    var group = ServiceGroupConfiguration(
        services: services + [
            application, DrainService(drain: drain, seconds: configuration.drainSeconds, logger: configuration.logger),
        ], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger)
    group.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGraceSeconds)
    group.maximumCancellationDuration = .seconds(5)
    do {
        try await ServiceGroup(configuration: group).run()
    } catch {
        throw ServerStartError.mapping(error, host: configuration.host, port: configuration.port)
    }
}

/// A server running in the background of this process (tests, demos, embedding).
public final class RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    /// `https` when the server terminates TLS (``ServerConfiguration/tls``), else `http`.
    public let scheme: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, scheme: String, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.scheme = scheme
        self.group = group
        self.task = task
    }

    /// The server's base URL, `http://127.0.0.1:<port>` (or the given host; `https` with TLS).
    public func baseURL(host: String = "127.0.0.1") -> String { "\(scheme)://\(host):\(port)" }

    /// Builds and starts a server, returning once it accepts connections.
    /// - Parameter configuration: The server's configuration (port 0 picks a free port).
    /// - Throws: As ``makeServerApplication(_:onStarted:)``, or ``ServerStartError`` when the address
    ///   cannot be bound.
    public static func start(_ configuration: ServerConfiguration) async throws -> RunningServer {
        let (ports, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let application = try await makeServerApplication(configuration) { port in continuation.yield(port) }
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: configuration.logger))
        let task = Task {
            do {
                try await group.run()
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
                throw error
            }
        }
        do {
            for try await port in ports {
                return RunningServer(
                    port: port, scheme: configuration.tls == nil ? "http" : "https", group: group, task: task)
            }
        } catch {
            throw ServerStartError.mapping(error, host: configuration.host, port: configuration.port)
        }
        throw ServerStartError(
            .stoppedBeforeListening, "the server stopped before it started listening; the log says why")
    }

    /// Stops accepting connections, finishes requests in flight, closes the database.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}

/// Closes the storage when the application shuts down (after the HTTP server, which is shut down first).
private struct StorageService: Service {
    let storage: any ServerStorage

    func run() async throws {
        try? await gracefulShutdown()
        await storage.close()
    }
}

private func environmentSource(_ name: String) -> ServerConfiguration.SecretSource? {
    SecretLoading.environment(name) == nil ? nil : .environment(name: name)
}

private func defaultSource(_ variable: String, demoFile: String) -> ServerConfiguration.SecretSource {
    environmentSource(variable) ?? .generatedFile(path: demoFile)
}
