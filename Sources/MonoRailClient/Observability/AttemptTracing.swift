import Foundation
import HTTPTypes
import MonoRailTransport
import Tracing

/// Each attempt at a request as a client span, and its duration as `http.client.request.duration`,
/// in the words of OpenTelemetry's stable HTTP client conventions.
///
/// The span is named `GET /trains/{id}` from the request's ``RequestMetadata/urlTemplate`` (the
/// method alone when there is none), is a child of the span current in the task (a model action's),
/// and carries `http.request.method`, `url.full` (secrets in the query redacted, as in the request
/// log), `url.template`, `server.address`, `server.port`, `http.request.resend_count` on a retry,
/// `http.response.status_code` and, for a failure, `error.type`. Its context goes out with the
/// request in the header fields the tracer writes (`traceparent` for a W3C tracer), so the server's
/// spans join the trace; a request sent without the app's credentials
/// (``RequestOptions/isAnonymous``, to another origin) carries none.
///
/// It sits inside the retries and the de-duplication: one span per request that really goes out,
/// and identical reads still share one.
struct AttemptTracing: Middleware {
    let telemetry: Telemetry
    let anonymous: Bool

    func intercept(
        _ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata, next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        let tracer = telemetry.tracer
        let measures = telemetry.metricsFactory != nil
        guard tracer != nil || measures else { return try await next(request, body, metadata) }
        let server = Self.server(of: request)
        var request = request
        let span = tracer.map { tracer in
            let span = tracer.startSpan(Self.spanName(request, metadata), ofKind: .client)
            span.attributes = Self.attributes(of: request, metadata, server: server)
            if !anonymous { tracer.inject(span.context, into: &request.headerFields, using: HTTPFieldsInjector()) }
            return span
        }
        let started = ContinuousClock.now
        let sent = request
        do {
            let (response, data) = try await InstrumentationContext.withCurrent(span?.context) {
                try await next(sent, body, metadata)
            }
            let status = Int(response.status.code)
            let errorType = status >= 400 ? String(status) : nil
            if let span {
                span.attributes["http.response.status_code"] = status
                span.attributes["http.response.body.size"] = data.count
                if let errorType {
                    span.attributes["error.type"] = errorType
                    span.setStatus(SpanStatus(code: .error))
                }
                span.end()
            }
            if measures {
                measure(since: started, request, metadata, server: server, status: status, errorType: errorType)
            }
            return (response, data)
        } catch {
            let errorType = Self.errorType(of: error)
            if let span {
                span.attributes["error.type"] = errorType
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
                span.end()
            }
            if measures {
                measure(since: started, request, metadata, server: server, status: nil, errorType: errorType)
            }
            throw error
        }
    }

    private func measure(
        since started: ContinuousClock.Instant, _ request: HTTPRequest, _ metadata: RequestMetadata,
        server: (address: String, port: Int)?, status: Int?, errorType: String?
    ) {
        var dimensions = [("http.request.method", request.method.rawValue)]
        if let status { dimensions.append(("http.response.status_code", String(status))) }
        if let errorType { dimensions.append(("error.type", errorType)) }
        if let server {
            dimensions.append(("server.address", server.address))
            dimensions.append(("server.port", String(server.port)))
        }
        if let template = metadata.urlTemplate { dimensions.append(("url.template", template)) }
        telemetry.record(ContinuousClock.now - started, in: "http.client.request.duration", dimensions)
    }

    /// `{method} {url.template}`, or the method alone: a span name must not carry ids.
    static func spanName(_ request: HTTPRequest, _ metadata: RequestMetadata) -> String {
        guard let template = metadata.urlTemplate else { return request.method.rawValue }
        return "\(request.method.rawValue) \(template)"
    }

    static func attributes(of request: HTTPRequest, _ metadata: RequestMetadata, server: (address: String, port: Int)?)
        -> SpanAttributes
    {
        var attributes = SpanAttributes()
        attributes["http.request.method"] = request.method.rawValue
        attributes["url.full"] = LoggingMiddleware.redactedURL(request)
        if let template = metadata.urlTemplate { attributes["url.template"] = template }
        if let server {
            attributes["server.address"] = server.address
            attributes["server.port"] = server.port
        }
        if metadata.attempt > 1 { attributes["http.request.resend_count"] = metadata.attempt - 1 }
        return attributes
    }

    /// The host and port of the request's authority; the scheme's port when it names none.
    static func server(of request: HTTPRequest) -> (address: String, port: Int)? {
        guard let authority = request.authority, !authority.isEmpty else { return nil }
        let defaultPort = request.scheme == "http" ? 80 : 443
        var host = Substring(authority)
        var port: Int?
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            // An IPv6 literal: `[::1]:8080`.
            let rest = host[host.index(after: close)...]
            port = rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            port = Int(host[host.index(after: colon)...])
            host = host[..<colon]
        }
        return (String(host), port ?? defaultPort)
    }

    /// OpenTelemetry's `error.type` of a failure that got no response: the transport's code
    /// (`timedOut`, `cannotConnect`, …), else the error's type.
    static func errorType(of error: any Error) -> String {
        if let transport = error as? TransportError { return transport.code.description }
        if let api = error as? APIError { return api.code.description }
        if error is CancellationError { return "cancelled" }
        return String(describing: type(of: error))
    }
}

/// Writes a tracer's propagation fields (`traceparent`, `tracestate`, …) into a request's header
/// fields; a name that is not a valid field name is left out.
struct HTTPFieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        fields[name] = value
    }
}

extension InstrumentationContext {
    /// Runs `body` with `context` as the task's current one, or as it is when there is none.
    static func withCurrent<Result>(
        _ context: InstrumentationContext?, _ body: () async throws -> Result
    ) async rethrows -> Result {
        guard let context else { return try await body() }
        return try await $current.withValue(context) { try await body() }
    }
}
