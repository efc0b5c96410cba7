public import Foundation
public import HTTPTypes
public import Logging
public import MonoRailTransport

/// Logs every attempt through swift-log: method, URL, status and duration, with credentials redacted.
///
/// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and API-key headers are never
/// logged in clear, nor are query parameters whose names look like secrets (`token`, `access_token`,
/// `api_key`, `password`, `secret`, `signature`, …). Headers are logged at `trace` level only.
///
/// The client adds one of these itself, using ``APIClient/Configuration/logger`` and
/// ``APIClient/Configuration/requestLogLevel``.
public struct LoggingMiddleware: Middleware {
    /// Where to log.
    public var logger: Logger
    /// The level of the one-line summary per request.
    public var level: Logger.Level

    /// Creates a logging middleware.
    public init(logger: Logger, level: Logger.Level = .info) {
        self.logger = logger
        self.level = level
    }

    /// Logs the request and its outcome.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        // Redacting and formatting cost more than the request's own client-side work; skip them
        // entirely when the summary would be dropped anyway.
        guard logger.logLevel <= level else { return try await next(request, body, metadata) }
        let url = Self.redactedURL(request)
        let started = ContinuousClock.now
        var logMetadata: Logger.Metadata = ["method": "\(request.method.rawValue)", "url": "\(url)"]
        if let operation = metadata.operationName { logMetadata["operation"] = "\(operation)" }
        if metadata.attempt > 1 { logMetadata["attempt"] = "\(metadata.attempt)" }
        if logger.logLevel <= .trace {
            logger.trace(
                "request headers",
                metadata: logMetadata.merging(["headers": "\(Self.redacted(request.headerFields))"]) { $1 })
        }
        do {
            let (response, data) = try await next(request, body, metadata)
            let duration = Self.milliseconds(since: started)
            logMetadata["status"] = "\(response.status.code)"
            logMetadata["duration_ms"] = "\(duration)"
            logger.log(
                level: level,
                "\(request.method.rawValue) \(url) → \(response.status.code) \(response.status.reasonPhrase) (\(duration) ms)",
                metadata: logMetadata)
            if logger.logLevel <= .trace {
                logger.trace(
                    "response headers",
                    metadata: logMetadata.merging(["headers": "\(Self.redacted(response.headerFields))"]) { $1 })
            }
            return (response, data)
        } catch {
            let duration = Self.milliseconds(since: started)
            logMetadata["duration_ms"] = "\(duration)"
            logMetadata["error"] = "\(error)"
            logger.log(
                level: level, "\(request.method.rawValue) \(url) failed after \(duration) ms: \(error)",
                metadata: logMetadata)
            throw error
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> String {
        let elapsed = ContinuousClock.now - start
        let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return String(format: "%.1f", millis)
    }

    // MARK: - Redaction

    static let sensitiveHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token", "x-csrf-token",
    ]

    static let sensitiveParameterFragments = [
        "token", "password", "passwd", "secret", "signature", "api_key", "apikey", "auth", "session", "credential",
    ]

    /// Whether a query parameter's value must not be logged.
    public static func isSensitiveParameter(_ name: String) -> Bool {
        let lowered = name.lowercased()
        if lowered == "key" || lowered == "sig" || lowered == "code" { return true }
        return sensitiveParameterFragments.contains { lowered.contains($0) }
    }

    /// The request URL with secret query values replaced by `[REDACTED]`.
    public static func redactedURL(_ request: HTTPRequest) -> String {
        let full = request.url?.absoluteString ?? request.path ?? ""
        guard let mark = full.firstIndex(of: "?") else { return full }
        let query = full[full.index(after: mark)...]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let decoded = name.removingPercentEncoding ?? name
            guard parts.count == 2, isSensitiveParameter(decoded) else { return String(pair) }
            return "\(name)=[REDACTED]"
        }
        return full[..<mark] + "?" + redacted.joined(separator: "&")
    }

    /// Header fields with credentials replaced by `[REDACTED]`.
    public static func redacted(_ fields: HTTPFields) -> String {
        fields.map { field in
            let value = sensitiveHeaders.contains(field.name.canonicalName) ? "[REDACTED]" : field.value
            return "\(field.name.rawName): \(value)"
        }.joined(separator: "; ")
    }
}
