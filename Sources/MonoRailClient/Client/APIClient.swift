public import CoreMetrics
public import Foundation
public import HTTPTypes
public import Logging
public import MonoRailTransport
public import Tracing

/// One configured API: base URL, transport, codecs, envelopes, middleware, retries, de-duplication,
/// errors and logging. Usable on its own with any `Codable` type.
///
/// ```swift
/// let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!)
/// let trains: [Train] = try await api.get("/trains", parameters: ["company": "DB"], root: "trains")
/// let train: Train = try await api.post("/trains", body: newTrain, root: "train")
/// ```
///
/// An `APIClient` is a `Sendable` value holder: share one instance across the app.
///
/// ## Topics
/// ### Making requests
/// - ``get(_:parameters:as:root:options:)``
/// - ``post(_:body:root:as:options:)``
/// - ``put(_:body:root:as:options:)``
/// - ``patch(_:body:root:as:options:)``
/// - ``delete(_:parameters:options:)``
/// - ``send(_:)``
/// - ``envelope(_:as:)``
public final class APIClient: Sendable {
    /// Everything an ``APIClient`` is configured with.
    public struct Configuration: Sendable {
        /// The URL paths are joined to: `https://host/api/v1` + `/trains`. Without one, only
        /// absolute URLs can be sent; a relative path is an ``APIError/Code/invalidRequest``.
        public var baseURL: URL?
        /// Sends the requests; `nil` uses `URLSessionTransport.shared`. The `MonoRail` module's
        /// `MonoRail.defaultTransport` picks AsyncHTTPClient on Linux.
        public var transport: (any Transport)?
        /// Key mapping, date formats and coercion for bodies sent and received.
        public var coding: CodingOptions
        /// How bodies are written and which response format is asked for (`Accept`). Default:
        /// ``WireFormat/json``. Each call can choose another (``RequestOptions/format``).
        public var format: WireFormat
        /// Namespace and `errors` handling for responses.
        public var envelope: EnvelopeStyle
        /// Middleware, outermost first.
        public var middleware: [any Middleware]
        /// MonoRail's original hook for default headers, default parameters and response headers,
        /// applied outside all ``middleware``; `nil` (the default) for none.
        public var networkingDelegate: (any NetworkingDelegate)?
        /// Tokens that refresh, sent to ``baseURL``'s origin only; `nil` (the default) for none.
        /// Applied inside all ``middleware``, outside retries.
        public var authentication: Authentication?
        /// When to retry.
        public var retryPolicy: RetryPolicy
        /// Whether concurrent identical GETs share one request (each call can opt out).
        public var deduplicatesRequests: Bool
        /// The timeout for each attempt; `nil` uses the transport's.
        public var timeout: Duration?
        /// The largest response body collected.
        public var maxResponseBodySize: Int
        /// Statuses whose recognisable bodies are validation errors: 422, and 400 for Django REST.
        public var validationStatuses: Set<Int>
        /// Header fields sent with every request unless the request sets them. `Accept` comes
        /// from ``format`` unless set here.
        public var defaultHeaders: HTTPFields
        /// Where requests are logged.
        public var logger: Logger
        /// The level of the one-line request log. Default `.debug`, so logs appear only when asked.
        public var requestLogLevel: Logger.Level
        /// The clock retries wait on; tests inject their own.
        public var clock: any Clock<Duration>
        /// Where spans go: a span per model action and per request attempt.
        /// `nil` (the default) uses the tracer `withTracer(_:_:)` binds for the task, else the one
        /// the process bootstrapped (`InstrumentationSystem.bootstrap(_:)`); with neither, no span
        /// is made at all.
        public var tracer: (any Tracer)?
        /// Where measurements go (`http.client.request.duration` and MonoRail's own). `nil` (the
        /// default) uses `MetricsSystem.factory` as it is when the client is made; with no backend
        /// bootstrapped, nothing is measured.
        public var metricsFactory: (any MetricsFactory)?

        /// Creates a configuration.
        public init(
            baseURL: URL?,
            transport: (any Transport)? = nil,
            coding: CodingOptions = CodingOptions(),
            format: WireFormat = .json,
            envelope: EnvelopeStyle = EnvelopeStyle(),
            middleware: [any Middleware] = [],
            retryPolicy: RetryPolicy = .default,
            deduplicatesRequests: Bool = true,
            timeout: Duration? = nil,
            maxResponseBodySize: Int = RequestMetadata.defaultMaxResponseBodySize,
            validationStatuses: Set<Int> = [422],
            defaultHeaders: HTTPFields = HTTPFields(),
            logger: Logger = Logger(label: "MonoRail"),
            requestLogLevel: Logger.Level = .debug,
            clock: any Clock<Duration> = ContinuousClock(),
            networkingDelegate: (any NetworkingDelegate)? = nil,
            authentication: Authentication? = nil,
            tracer: (any Tracer)? = nil,
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.baseURL = baseURL
            self.transport = transport
            self.coding = coding
            self.format = format
            self.envelope = envelope
            self.middleware = middleware
            self.retryPolicy = retryPolicy
            self.deduplicatesRequests = deduplicatesRequests
            self.timeout = timeout
            self.maxResponseBodySize = maxResponseBodySize
            self.validationStatuses = validationStatuses
            self.defaultHeaders = defaultHeaders
            self.logger = logger
            self.requestLogLevel = requestLogLevel
            self.clock = clock
            self.networkingDelegate = networkingDelegate
            self.authentication = authentication
            self.tracer = tracer
            self.metricsFactory = metricsFactory
        }
    }

    /// The configuration this client was made with.
    public let configuration: Configuration
    /// The transport in use.
    public let transport: any Transport
    /// The decoder for responses, built from the configuration.
    public let responseDecoder: ResponseDecoder
    let coalescer = RequestCoalescer()
    /// Where this client's spans and measurements go.
    package let telemetry: Telemetry
    /// The base URL's scheme, authority and path without a trailing slash, worked out once.
    let base: (scheme: String, authority: String, path: String)?
    /// The chains for calls with default options, built once: with and without de-duplication.
    let defaultChains: (deduplicating: MiddlewareNext, direct: MiddlewareNext)

    /// Creates a client.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let transport = configuration.transport ?? URLSessionTransport.shared
        self.transport = transport
        self.responseDecoder = ResponseDecoder(coding: configuration.coding, envelope: configuration.envelope)
        self.base = Self.baseComponents(configuration.baseURL)
        let telemetry = Telemetry(tracer: configuration.tracer, metricsFactory: configuration.metricsFactory)
        self.telemetry = telemetry
        let coalescer = self.coalescer
        self.defaultChains = (
            APIClient.makeChain(
                configuration, transport: transport, telemetry: telemetry, coalescer: coalescer, deduplicates: true,
                retryPolicy: nil),
            APIClient.makeChain(
                configuration, transport: transport, telemetry: telemetry, coalescer: coalescer, deduplicates: false,
                retryPolicy: nil)
        )
    }

    /// Creates a client with default settings.
    ///
    /// - Parameters:
    ///   - baseURL: The URL paths are joined to.
    ///   - transport: The transport; `nil` for `URLSessionTransport.shared`.
    public convenience init(baseURL: URL, transport: (any Transport)? = nil) {
        self.init(configuration: Configuration(baseURL: baseURL, transport: transport))
    }

    /// The base URL's path without a trailing slash (`/api/v1`), or nothing: where route
    /// templates start.
    package var basePath: String { base?.path ?? "" }

    /// The number of de-duplicated requests in flight.
    public var requestsInFlight: Int { coalescer.inFlightCount }
}

extension APIClient {
    /// A client with a changed copy of this client's configuration, for endpoints that follow other
    /// conventions (ApiModel's per-call `apiConfig`).
    ///
    /// ```swift
    /// let legacy = api.configured { $0.envelope.rootNamespace = "data"; $0.coding.keyMapping = .identity }
    /// ```
    ///
    /// The new client shares nothing mutable with this one; requests are not de-duplicated across them.
    ///
    /// - Parameter change: Edits the configuration copy.
    /// - Returns: A new client.
    public func configured(_ change: (inout Configuration) -> Void) -> APIClient {
        var configuration = self.configuration
        configuration.transport = transport
        change(&configuration)
        return APIClient(configuration: configuration)
    }
}
