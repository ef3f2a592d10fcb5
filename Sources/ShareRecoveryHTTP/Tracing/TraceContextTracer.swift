public import Tracing
import ShareCrypto
import W3CTraceContext

/// A tracer that carries W3C Trace Context (`traceparent`, `tracestate`) and records spans nowhere
/// unless it is given ``init(onEnd:)``: the default of the reference server's `serve`, so that one trace
/// id follows a request into the calls it makes (the integrator's webhooks) without any exporter.
///
/// - Extract: a well-formed `traceparent` (version `00`, non-zero ids) becomes the parent of the next
///   span; a malformed one is ignored (a new trace starts), a malformed `tracestate` is dropped alone.
/// - Spans: each gets a fresh random span id in its parent's trace, or a fresh trace id without one.
/// - Inject: the current span's `traceparent` (and `tracestate` when there is one).
///
/// Bootstrap it once per process (`InstrumentationSystem.bootstrap(TraceContextTracer())`) or bind it
/// to a task with `withTracer(_:_:)`; this library never bootstraps anything itself.
public struct TraceContextTracer: Tracer {
    /// The spans this tracer starts.
    public typealias Span = TraceContextSpan

    private let onEnd: (@Sendable (FinishedSpan) -> Void)?

    /// Creates a tracer.
    /// - Parameter onEnd: Called with every span once it ends (a test's recorder, a debug log). `nil`
    ///   (the default): spans are recorded nowhere, and setting their attributes costs nothing.
    public init(onEnd: (@Sendable (FinishedSpan) -> Void)? = nil) {
        self.onEnd = onEnd
    }

    /// Starts a span in the trace of `context`'s span, or in a new trace.
    /// - Parameters:
    ///   - operationName: The span's name (a route template or operation, never an identifier).
    ///   - context: The parent's context.
    ///   - kind: The span's kind.
    ///   - instant: When it starts.
    ///   - function: The calling function (unused).
    ///   - fileID: The calling file (unused).
    ///   - line: The calling line (unused).
    /// - Returns: The started span.
    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> TraceContextSpan {
        var spanContext = context()
        let parent = spanContext[TraceContextKey.self]
        let own = TraceContext(
            traceID: parent?.traceID ?? TraceIdentifiers.traceID(), spanID: TraceIdentifiers.spanID(),
            flags: parent?.flags ?? (onEnd == nil ? [] : .sampled), state: parent?.state ?? TraceState())
        spanContext[TraceContextKey.self] = own
        return TraceContextSpan(
            operationName: operationName, kind: kind, context: spanContext, parentSpanID: parent?.spanID,
            startNanoseconds: onEnd == nil ? 0 : instant().nanosecondsSinceEpoch, onEnd: onEnd)
    }

    /// Nothing is buffered.
    public func forceFlush() {}

    /// Reads `traceparent` and `tracestate` from `carrier` into `context`; anything malformed is ignored.
    /// - Parameters:
    ///   - carrier: The incoming request's headers.
    ///   - context: The context the parent is stored in.
    ///   - extractor: Reads one header.
    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let parent = extractor.extract(key: TraceHeaders.traceParent, from: carrier) else { return }
        let state = extractor.extract(key: TraceHeaders.traceState, from: carrier)
        guard
            let trace = (try? TraceContext(traceParentHeaderValue: parent, traceStateHeaderValue: state))
                ?? (try? TraceContext(traceParentHeaderValue: parent))
        else { return }
        context[TraceContextKey.self] = trace
    }

    /// Writes the `traceparent` (and `tracestate`) of `context`'s span into `carrier`.
    /// - Parameters:
    ///   - context: The current span's context.
    ///   - carrier: The outgoing request's headers.
    ///   - injector: Writes one header.
    public func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let trace = context[TraceContextKey.self] else { return }
        injector.inject(trace.traceParentHeaderValue, forKey: TraceHeaders.traceParent, into: &carrier)
        if let state = trace.traceStateHeaderValue {
            injector.inject(state, forKey: TraceHeaders.traceState, into: &carrier)
        }
    }

    /// The trace id of `context`'s span (32 lowercase hex digits), for a log line; `nil` outside a trace.
    /// - Parameter context: A context, usually `InstrumentationContext.current`.
    /// - Returns: The trace id, or `nil`.
    public static func traceID(in context: InstrumentationContext?) -> String? {
        context?[TraceContextKey.self].map { "\($0.traceID)" }
    }
}

/// Where a ``TraceContextTracer`` span keeps its W3C trace context in an `InstrumentationContext`.
enum TraceContextKey: InstrumentationContextKey {
    typealias Value = TraceContext
    static var nameOverride: String? { "w3c-trace-context" }
}

/// The header names of W3C Trace Context.
package enum TraceHeaders {
    package static let traceParent = "traceparent"
    package static let traceState = "tracestate"
}

/// A span of ``TraceContextTracer``. When the tracer records nothing, its name and attributes are not
/// kept at all.
public final class TraceContextSpan: Tracing.Span {
    /// The span's context: its trace context, and whatever the parent's context carried.
    public let context: InstrumentationContext
    private let kind: SpanKind
    private let parentSpanID: SpanID?
    private let startNanoseconds: UInt64
    private let onEnd: (@Sendable (FinishedSpan) -> Void)?
    private let initialName: String
    /// Only when recording.
    private let recorded: Locked<Recorded>?

    private struct Recorded {
        var name: String
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var errorTypes: [String] = []
        var events: [String] = []
        var ended = false
    }

    init(
        operationName: String, kind: SpanKind, context: InstrumentationContext, parentSpanID: SpanID?,
        startNanoseconds: UInt64, onEnd: (@Sendable (FinishedSpan) -> Void)?
    ) {
        self.context = context
        self.kind = kind
        self.parentSpanID = parentSpanID
        self.startNanoseconds = startNanoseconds
        self.onEnd = onEnd
        initialName = operationName
        recorded = onEnd == nil ? nil : Locked(Recorded(name: operationName))
    }

    /// Whether anything is recorded (the tracer was given an `onEnd`).
    public var isRecording: Bool { recorded != nil }

    /// The span's name.
    public var operationName: String {
        get { recorded?.withLock { $0.name } ?? initialName }
        set { recorded?.withLock { $0.name = newValue } }
    }

    /// The span's attributes (always empty when not recording).
    public var attributes: SpanAttributes {
        get { recorded?.withLock { $0.attributes } ?? [:] }
        set { recorded?.withLock { $0.attributes = newValue } }
    }

    /// Sets the span's status.
    /// - Parameter status: The status.
    public func setStatus(_ status: SpanStatus) { recorded?.withLock { $0.status = status } }

    /// Records an event's name (its attributes are dropped).
    /// - Parameter event: The event.
    public func addEvent(_ event: SpanEvent) { recorded?.withLock { $0.events.append(event.name) } }

    /// Records the error's type only: a reason might quote what a client sent.
    /// - Parameters:
    ///   - error: The error.
    ///   - attributes: Dropped.
    ///   - instant: Unused.
    public func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        recorded?.withLock { $0.errorTypes.append(String(reflecting: type(of: error))) }
    }

    /// Links are not recorded.
    /// - Parameter link: Ignored.
    public func addLink(_ link: SpanLink) {}

    /// Ends the span; the first call hands it to the tracer's `onEnd`, later calls do nothing.
    /// - Parameter instant: When it ended.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let recorded, let onEnd, let trace = context[TraceContextKey.self] else { return }
        let state: Recorded? = recorded.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state
        }
        guard let state else { return }
        onEnd(
            FinishedSpan(
                operationName: state.name, kind: kind, traceID: "\(trace.traceID)", spanID: "\(trace.spanID)",
                parentSpanID: parentSpanID.map { "\($0)" }, attributes: state.attributes, status: state.status,
                errorTypes: state.errorTypes, events: state.events, startNanosecondsSinceEpoch: startNanoseconds,
                endNanosecondsSinceEpoch: instant().nanosecondsSinceEpoch))
    }
}

/// A span a recording ``TraceContextTracer`` handed to its `onEnd`.
public struct FinishedSpan: Sendable {
    /// The span's name.
    public let operationName: String
    /// Server, client or internal.
    public let kind: SpanKind
    /// 32 lowercase hex digits.
    public let traceID: String
    /// 16 lowercase hex digits.
    public let spanID: String
    /// The parent's span id, `nil` for a trace's root (in this process or the caller's `traceparent`).
    public let parentSpanID: String?
    /// The attributes set on it.
    public let attributes: SpanAttributes
    /// The status set on it, if any.
    public let status: SpanStatus?
    /// The types of the errors recorded on it.
    public let errorTypes: [String]
    /// The names of the events added to it.
    public let events: [String]
    /// When it started.
    public let startNanosecondsSinceEpoch: UInt64
    /// When it ended.
    public let endNanosecondsSinceEpoch: UInt64
}
