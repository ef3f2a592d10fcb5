import ArgumentParser
import Logging
import ShareRecovery
import ShareRecoveryServer

/// `serve`: the reference server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the reference server (integrator API, custodian webhooks, recovery endpoints).",
        discussion: helpText(
            "On its defaults (SQLite) it is ready to try: it generates a master key (<database>.master-key) and a webhook secret (<database>.webhook-secret) next to the database on first start, and appends one-time codes to share-recovery-otp.jsonl. With PostgreSQL, give the secrets by file or environment ($SHARE_RECOVERY_MASTER_KEY, $SHARE_RECOVERY_WEBHOOK_SECRET), the password by --database-password-file or $SHARE_RECOVERY_DATABASE_PASSWORD, and migrate the database first (`share-recovery migrate`) or pass --migrate. Prints {\"listening\": …, \"port\": …} once it accepts connections; stops on SIGINT or SIGTERM, after --drain-seconds of failing /ready. Probes: GET /health (liveness), GET /ready (200 once the database answers and is migrated, else 503). With --metrics-token-file, GET /metrics serves Prometheus text to a scraper sending that token as a bearer token (docs/server.md, \"Operations\"). A W3C traceparent header is accepted and passed on to the webhook calls a request makes; a build with `--traits OTLP` exports the spans over OTLP/HTTP as the OTEL_* variables say (docs/server.md, \"Tracing\").",
            examples: [
                "share-recovery serve",
                "share-recovery serve --port 0 --database /tmp/sr/server.sqlite",
                "share-recovery serve --database postgres://recovery@db.internal:5432/recovery --database-password-file db.password --database-tls verify-full --database-ca-file db-ca.pem --master-key-file master.key --webhook-secret-file webhook.secret",
                "share-recovery serve --database postgres://recovery:secret@127.0.0.1:5432/recovery --migrate --master-key-file master.key --webhook-secret-file webhook.secret",
                "share-recovery serve --database postgres://recovery@127.0.0.1/recovery --database-pool-size 16 --database-statement-timeout 15 --database-lock-timeout 5 --database-idle-in-transaction-timeout 30 --master-key-file master.key --webhook-secret-file webhook.secret",
                "share-recovery serve --metrics-token-file metrics.token",
                "share-recovery serve --webhook-secret-file webhook.secrets --metrics-token-file metrics.tokens",
                "share-recovery serve --host 0.0.0.0 --drain-seconds 10",
                "share-recovery serve --host 0.0.0.0 --port 8443 --tls-cert-file server.pem --tls-key-file server.key",
                "share-recovery serve --otp-address-limit-scale 100",
                "share-recovery serve --host 0.0.0.0 --trusted-proxy 10.0.0.0/8 --trusted-proxy fd00::/8",
                "share-recovery serve --trusted-proxy 192.0.2.10 --trusted-proxy-header forwarded",
                "share-recovery serve --webhook-base https://integrator.example/hooks --webhook-timeout 30",
                "share-recovery serve --events-url https://integrator.example/events --events-secret-file events.secrets",
                "share-recovery serve --otp-webhook https://sms-gateway.internal/otp --otp-webhook-secret-file otp-webhook.secrets",
            ]))

    @Option(help: "Bind address.") var host = "127.0.0.1"
    @Option(help: "TCP port (0: any free port; the bound port is printed).") var port = 8080
    @Option(
        help: ArgumentHelp(
            "PEM file of the certificate chain (the server's first): serve HTTPS itself, with --tls-key-file.",
            discussion:
                "Without it the server speaks plain HTTP: keep it on 127.0.0.1 or a private network behind a proxy that terminates TLS (docs/server.md, \"TLS\")."
        ))
    var tlsCertFile: String?
    @Option(help: "PEM file of the certificate's private key (with --tls-cert-file; keep it mode 0600).")
    var tlsKeyFile: String?
    @OptionGroup var database: ServerDatabaseOptions
    @Flag(
        help: ArgumentHelp(
            "PostgreSQL: apply this release's missing migrations at start, one process at a time (SQLite always does).",
            discussion:
                "Without it, serve refuses a PostgreSQL database that lacks a migration (databaseNotMigrated): run `share-recovery migrate` first, as a deploy step of its own."
        ))
    var migrate = false
    @Option(
        help:
            "File with the master keys, 64 hex digits a line: the first seals, all open (else $SHARE_RECOVERY_MASTER_KEY; SQLite: a generated demo key file)."
    )
    var masterKeyFile: String?
    @Option(
        help: ArgumentHelp(
            "File with the webhook secret, one value a line: the first is sent, all are accepted (else $SHARE_RECOVERY_WEBHOOK_SECRET; SQLite: a generated demo file).",
            discussion:
                "To rotate without downtime: add the new value as the second line on every server, then move it first, then remove the old one (docs/server.md, \"Rotating secrets\"). The start's log line names the value signed with by its key id, never by the value."
        ))
    var webhookSecretFile: String?
    @Option(help: "The integrator's webhook base URL (default: this server's own /webhook).") var webhookBase: String?
    @Option(help: "File the one-time codes are appended to (JSON lines).") var otpFile = "share-recovery-otp.jsonl"
    @Option(
        help: ArgumentHelp(
            "Deliver one-time codes by POSTing to this URL instead of the file, signed per Standard Webhooks (needs --otp-webhook-secret-file).",
            discussion:
                "Each POST carries webhook-id (the flow's id), webhook-timestamp and webhook-signature, as integrator events do; the gateway verifies them before it sends the code (docs/server.md, \"The OTP webhook\")."
        ))
    var otpWebhook: String?
    @Option(
        help:
            "File of whsec_<base64> secrets, one a line; the first signs the one-time codes sent to --otp-webhook, the others wait for a rotation."
    )
    var otpWebhookSecretFile: String?
    @Option(
        help:
            "File with the bearer token (16+ bytes) a Prometheus scraper sends to GET /metrics, one a line, all accepted (default: /metrics is off)."
    )
    var metricsTokenFile: String?
    @Option(help: "Devices a wallet may have, the one that created or recovered it included (docs/devices.md).")
    var maxDevices = 8
    @Option(
        help: ArgumentHelp(
            "Refuse signing (409 refreshRequired) with a wallet's primary signing set once it is DAYS old, until the device runs `share-recovery refresh --server` (default: never).",
            valueName: "DAYS"))
    var refreshAfterDays: Int?
    @Option(
        help: ArgumentHelp(
            "Seconds from SIGTERM or SIGINT during which GET /ready answers 503 while every other route still serves, before the listener closes; 0 to 60.",
            discussion:
                "Time for a load balancer's readiness probe to take the process out of rotation (docs/server.md, \"Shutting down\"); 0 closes the listener at once."
        ))
    var drainSeconds = 2
    @Option(
        help: ArgumentHelp(
            "Multiply the per-address one-time-code limits (50 new flows and 100 verifications per 15 minutes) by N, 1 to 1000.",
            discussion:
                "For a front proxy through which many users reach the server from one address, or a test rig; the per-identifier limits stay."
        ))
    var otpAddressLimitScale = 1
    @Option(
        help: ArgumentHelp(
            "A network of the proxies in front of this server (CIDR: 10.0.0.0/8, fd00::/8; a bare address is one host), repeatable.",
            discussion:
                "From a peer in one of them, the client is the rightmost untrusted hop of the header --trusted-proxy-header names, and the per-address limits count that client; without this option forwarding headers are ignored (docs/server.md, \"Behind a proxy\")."
        ))
    var trustedProxy: [String] = []
    @Option(
        help: ArgumentHelp(
            "The header the trusted proxies append the client to: x-forwarded-for (default) or forwarded (RFC 7239 for=).",
            discussion: "Only this header is read: the other one would come from the client as it wrote it."))
    var trustedProxyHeader = TrustedProxies.Header.xForwardedFor
    @Option(help: "Seconds a recovery waits for the integrator's /backup/fetch webhook before answering 502, 1 to 600.")
    var webhookTimeout = 10
    @Option(
        help: ArgumentHelp(
            "POST each integrator event (recoveries, methods, devices, wallets, exhausted one-time codes) to this URL, signed per Standard Webhooks.",
            discussion:
                "Events wait in the database's outbox until a server delivers them; without this option this server delivers none (docs/server.md, \"Integrator events\")."
        ))
    var eventsUrl: String?
    @Option(
        help: "File of whsec_<base64> secrets, one per line; the first signs the events (needed with --events-url).")
    var eventsSecretFile: String?
    @Option(help: "Attempts after which an event is dead and waits for `events redeliver`, 1 to 100.")
    var eventsMaxAttempts = EventsConfiguration.defaultMaximumAttempts

    func validate() throws {
        guard (eventsUrl == nil) == (eventsSecretFile == nil) else {
            throw ValidationError("--events-url and --events-secret-file go together.")
        }
        guard (tlsCertFile == nil) == (tlsKeyFile == nil) else {
            throw ValidationError("--tls-cert-file and --tls-key-file go together.")
        }
        guard (otpWebhook == nil) == (otpWebhookSecretFile == nil) else {
            throw ValidationError(
                "--otp-webhook and --otp-webhook-secret-file go together: the gateway must be able to tell the server's codes from anyone else's."
            )
        }
        guard (1...100).contains(eventsMaxAttempts) else {
            throw ValidationError("--events-max-attempts must be 1 to 100, not \(eventsMaxAttempts).")
        }
        guard (1...1000).contains(otpAddressLimitScale) else {
            throw ValidationError("--otp-address-limit-scale must be 1 to 1000, not \(otpAddressLimitScale).")
        }
        guard (0...60).contains(drainSeconds) else {
            throw ValidationError("--drain-seconds must be 0 to 60, not \(drainSeconds).")
        }
        guard (1...600).contains(webhookTimeout) else {
            throw ValidationError("--webhook-timeout must be 1 to 600 seconds, not \(webhookTimeout).")
        }
    }

    /// The OTP webhook when one is given (``validate()`` made sure its secret file is), else the file.
    private func otpSender() throws -> any OTPSender {
        guard let otpWebhook, let otpWebhookSecretFile else { return FileOTPSender(path: otpFile) }
        return try WebhookOTPSender(url: otpWebhook, secretFile: otpWebhookSecretFile)
    }

    /// A `--database` value: a PostgreSQL URL, else an SQLite path.
    static func database(_ text: String) -> ServerConfiguration.Database {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") ? .postgres(url: text) : .sqlite(path: text)
    }

    func run() async throws {
        var logger = Logger(label: "share-recovery-server")
        logger.logLevel = .info
        var configuration = ServerConfiguration(
            host: host, port: port,
            database: database.location,
            masterKey: masterKeyFile.map { .file(path: $0) }, webhookSecret: webhookSecretFile.map { .file(path: $0) },
            webhookBase: webhookBase,
            otpSender: try otpSender(), logger: logger)
        configuration.postgres = try database.settings()
        if let tlsCertFile, let tlsKeyFile {
            configuration.tls = ServerTLS(certificateFile: tlsCertFile, privateKeyFile: tlsKeyFile)
        }
        configuration.postgres.migrateAtStart = migrate
        configuration.metricsToken = metricsTokenFile.map { .file(path: $0) }
        configuration.rateLimits = configuration.rateLimits.scalingPerAddress(by: otpAddressLimitScale)
        configuration.webhookTimeoutSeconds = webhookTimeout
        configuration.drainSeconds = drainSeconds
        var networks: [IPNetwork] = []
        for cidr in trustedProxy {
            do { networks.append(try IPNetwork(cidr: cidr)) } catch {
                throw CLIError.usage(error)
            }
        }
        configuration.trustedProxies = TrustedProxies(networks: networks, header: trustedProxyHeader)
        if let eventsUrl, let eventsSecretFile {
            configuration.events = EventsConfiguration(
                url: eventsUrl, secretFile: eventsSecretFile, maximumAttempts: eventsMaxAttempts)
        }
        guard (1...255).contains(maxDevices) else { throw CLIError.usage("--max-devices must be 1…255") }
        configuration.maximumDevicesPerWallet = maxDevices
        if let refreshAfterDays {
            guard (1...36_500).contains(refreshAfterDays) else {
                throw CLIError.usage("--refresh-after-days must be 1…36500 (days); leave it out for no refresh policy")
            }
            configuration.refreshAfterSeconds = Int64(refreshAfterDays) * 86_400
        }
        let host = configuration.host
        let scheme = configuration.tls == nil ? "http" : "https"
        // The one place a tracer is bootstrapped (docs/server.md, "Tracing").
        let tracing = try ServerTracing.bootstrap(logger: logger)
        try await runServer(configuration, services: tracing) { port in
            Terminal.output(#"{"listening":"\#(scheme)://\#(host):\#(port)","port":\#(port)}"#)
        }
    }
}
