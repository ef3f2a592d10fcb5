public import Logging
public import ServiceLifecycle
import ShareRecoveryHTTP
import Tracing

#if OTLP
import OTel
#endif

/// The process-wide tracer of `share-recovery serve` (docs/server.md, "Tracing"). Only the `serve`
/// path calls this: the libraries never bootstrap a tracer, so a test or an embedding application
/// installs its own (`withTracer(_:_:)`, or its own `InstrumentationSystem.bootstrap`).
public enum ServerTracing {
    /// The service name spans are exported under, unless `OTEL_SERVICE_NAME` says otherwise.
    public static let serviceName = "share-recovery"

    /// Whether this build exports spans over OTLP (built with `--traits OTLP`).
    public static var exportsOTLP: Bool {
        #if OTLP
        true
        #else
        false
        #endif
    }

    /// Bootstraps `InstrumentationSystem` with the server's tracer; call it once per process.
    ///
    /// - Default build: a `TraceContextTracer` (ShareRecoveryHTTP) that accepts and propagates W3C `traceparent` and
    ///   records spans nowhere, except as one debug line each (ids, name, duration; no attributes)
    ///   when `logger` logs at `debug`.
    /// - Built with the `OTLP` trait: swift-otel's tracer, exporting over OTLP/HTTP as the standard
    ///   `OTEL_*` variables say (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_SAMPLER`, …); its
    ///   exporter is the returned service.
    /// - Parameter logger: The server's logger.
    /// - Returns: The services to run beside the server (pass them to ``runServer(_:services:onStarted:)``).
    /// - Throws: ``ServerStartError`` `invalidConfiguration` when the `OTEL_*` variables are invalid.
    public static func bootstrap(logger: Logger) throws(ServerStartError) -> [any Service] {
        #if OTLP
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        do {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            return [backend.service]
        } catch {
            // Not the error's text: it may quote OTEL_EXPORTER_OTLP_HEADERS, which can hold a token.
            throw ServerStartError(
                .invalidConfiguration,
                "the OTLP trace exporter could not be configured (\(type(of: error))): check the OTEL_* variables "
                    + "(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf or http/json, OTEL_TRACES_SAMPLER)"
            )
        }
        #else
        var onEnd: (@Sendable (FinishedSpan) -> Void)?
        if logger.logLevel <= .debug {
            onEnd = { (span: FinishedSpan) in
                let micros = (span.endNanosecondsSinceEpoch &- span.startNanosecondsSinceEpoch) / 1000
                let metadata: Logger.Metadata = [
                    "trace_id": .string(span.traceID), "span_id": .string(span.spanID),
                    "parent_span_id": .string(span.parentSpanID ?? "-"), "span": .string(span.operationName),
                    "duration_us": .stringConvertible(micros),
                ]
                logger.debug("span ended", metadata: metadata)
            }
        }
        InstrumentationSystem.bootstrap(TraceContextTracer(onEnd: onEnd))
        return []
        #endif
    }
}
