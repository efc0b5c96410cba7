package import CoreMetrics
import Foundation
package import Tracing

/// Where a client's spans and measurements go, and the measurements it made so far.
///
/// With no tracer and no metrics backend, nothing here does any work beyond finding that out: no
/// span, no attribute, no metric object is made (the round-trip benchmark pairs this).
package final class Telemetry: Sendable {
    private let configuredTracer: (any Tracer)?
    /// The factory measurements go to; `nil` when it is swift-metrics' no-op one.
    package let metricsFactory: (any MetricsFactory)?
    private let timers = Locked<[MetricKey: CoreMetrics.Timer]>([:])
    private let counters = Locked<[MetricKey: Counter]>([:])
    private let gauges = Locked<[MetricKey: Gauge]>([:])

    package init(tracer: (any Tracer)?, metricsFactory: (any MetricsFactory)?) {
        self.configuredTracer = tracer
        let factory = metricsFactory ?? MetricsSystem.factory
        self.metricsFactory = factory is NOOPMetricsHandler ? nil : factory
    }

    /// The tracer spans go to in this task: the configured one, else the one `withTracer(_:_:)`
    /// binds or the process bootstrapped; `nil` when none records, so that callers skip the work.
    package var tracer: (any Tracer)? {
        let tracer = configuredTracer ?? InstrumentationSystem.tracer
        return tracer is NoOpTracer ? nil : tracer
    }

    // MARK: - Metrics

    /// A metric's label and dimensions: made once, then found again.
    struct MetricKey: Hashable, Sendable {
        var label: String
        var dimensions: [String]

        init(_ label: String, _ dimensions: [(String, String)]) {
            self.label = label
            self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
        }
    }

    /// Records a duration in the timer of `label` and `dimensions`.
    package func record(_ duration: Duration, in label: String, _ dimensions: [(String, String)]) {
        guard let factory = metricsFactory else { return }
        let timer = Self.metric(MetricKey(label, dimensions), in: timers) {
            CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
        }
        let (seconds, attoseconds) = duration.components
        timer.recordNanoseconds(seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    /// Adds `amount` to the counter of `label` and `dimensions`.
    package func count(_ label: String, _ dimensions: [(String, String)], by amount: Int = 1) {
        guard let factory = metricsFactory else { return }
        let counter = Self.metric(MetricKey(label, dimensions), in: counters) {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
        counter.increment(by: amount)
    }

    /// Sets the gauge of `label` and `dimensions`.
    package func set(_ label: String, _ dimensions: [(String, String)], to value: Double) {
        guard let factory = metricsFactory else { return }
        let gauge = Self.metric(MetricKey(label, dimensions), in: gauges) {
            Gauge(label: label, dimensions: dimensions, factory: factory)
        }
        gauge.record(value)
    }

    private static func metric<Metric>(
        _ key: MetricKey, in cache: Locked<[MetricKey: Metric]>, make: () -> Metric
    ) -> Metric {
        cache.withLock { metrics in
            if let metric = metrics[key] { return metric }
            let metric = make()
            metrics[key] = metric
            return metric
        }
    }
}

// MARK: - Spans

extension Telemetry {
    /// Runs `body` in a span named `name`, current for the task while it runs, when a tracer
    /// records; else runs `body` with no span. A failure sets the span's status and `error.type`
    /// (the ``APIError`` code) and is rethrown.
    ///
    /// - Parameters:
    ///   - context: The span's parent; `nil` for the task's current span, `.topLevel` for a new trace.
    ///   - links: Spans this one follows from, in other traces (a kept write's `save()`).
    package func withSpan<Result>(
        _ name: String,
        ofKind kind: SpanKind = .internal,
        context: InstrumentationContext? = nil,
        attributes: @autoclosure () -> SpanAttributes = [:],
        links: [InstrumentationContext] = [],
        _ body: ((any Span)?) async throws -> Result
    ) async rethrows -> Result {
        guard let tracer else { return try await body(nil) }
        let span = tracer.startSpan(name, context: context ?? .current ?? .topLevel, ofKind: kind)
        span.attributes = attributes()
        for link in links { span.addLink(SpanLink(context: link, attributes: [:])) }
        defer { span.end() }
        do {
            return try await InstrumentationContext.$current.withValue(span.context) { try await body(span) }
        } catch {
            span.attributes["error.type"] = AttemptTracing.errorType(of: error)
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    /// The current span's context written out with the tracer's own fields (`traceparent` for a W3C
    /// tracer), to be kept beside a write and read back by ``context(from:)``, maybe in another
    /// process; `nil` with no tracer, or no span to keep.
    package func propagationFields(of context: InstrumentationContext) -> [String: String]? {
        guard let tracer else { return nil }
        var fields: [String: String] = [:]
        tracer.inject(context, into: &fields, using: DictionaryPropagation())
        return fields.isEmpty ? nil : fields
    }

    /// The context kept fields describe, read by the tracer that records now; `nil` when it finds
    /// none in them.
    package func context(from fields: [String: String]) -> InstrumentationContext? {
        guard let tracer, !fields.isEmpty else { return nil }
        var context = InstrumentationContext.topLevel
        tracer.extract(fields, into: &context, using: DictionaryPropagation())
        return context.isEmpty ? nil : context
    }
}

/// Propagation fields in a plain dictionary, as a kept write stores them.
struct DictionaryPropagation: Injector, Extractor {
    func inject(_ value: String, forKey key: String, into fields: inout [String: String]) {
        fields[key] = value
    }

    func extract(key: String, from fields: [String: String]) -> String? {
        fields[key]
    }
}
