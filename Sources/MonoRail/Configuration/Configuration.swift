public import Foundation
public import HTTPTypes
public import Logging

extension MonoRail {
    /// Where models find their server and how they talk to it.
    ///
    /// Set it globally with ``MonoRail/configure(_:)``, per store with
    /// ``ResourceStore/init(configuration:)``, and adjust it per model with
    /// ``ResourceModel/configure(_:)``.
    ///
    /// ```swift
    /// MonoRail.configure {
    ///     $0.apiRootURL = URL(string: "https://api.example.com/v1")!
    ///     $0.conventions = .djangoREST
    ///     $0.coding.coercion = .lenient
    ///     $0.format = .messagePack
    ///     $0.middleware = [HeadersMiddleware(["Authorization": "Bearer …"])]
    /// }
    /// ```
    public struct Configuration: Sendable {
        /// The URL every model path is joined to. Required before the first request.
        public var apiRootURL: URL?
        /// Sends the requests; `nil` uses ``MonoRail/defaultTransport``.
        public var transport: (any Transport)?
        /// Routes, body roots, update method and validation statuses. Default ``ServerConventions/rails``.
        public var conventions: ServerConventions
        /// Key mapping (snake_case), date formats and coercion (strict by default).
        public var coding: CodingOptions
        /// The body format and the `Accept` asked for: ``WireFormat/json`` (default),
        /// ``WireFormat/messagePack``, ``WireFormat/formURLEncoded`` or ``WireFormat/multipart``.
        /// Models with a ``FileUpload`` to send go out as `multipart/form-data` whatever this says.
        public var format: WireFormat = .json
        /// Middleware, outermost first: headers, parameters, hooks, logging.
        public var middleware: [any Middleware]
        /// When to retry. Default ``RetryPolicy/default``: idempotent requests on transient failures.
        public var retryPolicy: RetryPolicy
        /// Whether concurrent identical GETs share one request. Default `true`.
        public var deduplicatesRequests: Bool
        /// The timeout for each attempt; `nil` uses the transport's.
        public var timeout: Duration?
        /// The largest response body collected.
        public var maxResponseBodySize: Int
        /// Header fields sent with every request unless the request sets them. `Accept` follows
        /// ``format`` unless set here.
        public var defaultHeaders: HTTPFields
        /// Where requests are logged.
        public var logger: Logger
        /// The level of the one-line request log.
        public var requestLogLevel: Logger.Level
        /// How deep records may embed records (a train embedding cars embedding …) before a response
        /// is refused as a decoding failure. Default 32.
        public var maxEmbeddingDepth: Int = 32

        /// Creates a configuration with Rails conventions.
        public init(
            apiRootURL: URL? = nil,
            transport: (any Transport)? = nil,
            conventions: ServerConventions = .rails,
            coding: CodingOptions = CodingOptions(),
            middleware: [any Middleware] = [],
            retryPolicy: RetryPolicy = .default,
            deduplicatesRequests: Bool = true,
            timeout: Duration? = nil,
            maxResponseBodySize: Int = RequestMetadata.defaultMaxResponseBodySize,
            defaultHeaders: HTTPFields = HTTPFields(),
            logger: Logger = Logger(label: "MonoRail"),
            requestLogLevel: Logger.Level = .debug
        ) {
            self.apiRootURL = apiRootURL
            self.transport = transport
            self.conventions = conventions
            self.coding = coding
            self.middleware = middleware
            self.retryPolicy = retryPolicy
            self.deduplicatesRequests = deduplicatesRequests
            self.timeout = timeout
            self.maxResponseBodySize = maxResponseBodySize
            self.defaultHeaders = defaultHeaders
            self.logger = logger
            self.requestLogLevel = requestLogLevel
        }

        /// The client settings this configuration amounts to.
        ///
        /// - Throws: ``APIError`` with ``APIError/Code/invalidRequest`` when ``apiRootURL`` is not set.
        public func clientConfiguration() throws -> APIClient.Configuration {
            guard let apiRootURL else {
                throw APIError(
                    .invalidRequest,
                    "no API root URL is configured: call MonoRail.register(apiRootURL:) or set apiRootURL "
                        + "in MonoRail.configure { … } first")
            }
            return APIClient.Configuration(
                baseURL: apiRootURL,
                transport: transport ?? MonoRail.defaultTransport,
                coding: coding,
                format: format,
                envelope: EnvelopeStyle(rootNamespace: conventions.rootNamespace),
                middleware: middleware,
                retryPolicy: retryPolicy,
                deduplicatesRequests: deduplicatesRequests,
                timeout: timeout,
                maxResponseBodySize: maxResponseBodySize,
                validationStatuses: conventions.validationStatuses,
                defaultHeaders: defaultHeaders,
                logger: logger,
                requestLogLevel: requestLogLevel)
        }
    }

    /// Points the default store at an API (the seed's `MonoRail.register(apiRootUrl:)`).
    ///
    /// ```swift
    /// MonoRail.register(apiRootURL: URL(string: "http://127.0.0.1:3000")!)
    /// ```
    public static func register(apiRootURL: URL) {
        ResourceStore.default.configure { $0.apiRootURL = apiRootURL }
    }

    /// Changes the default store's configuration.
    ///
    /// ```swift
    /// MonoRail.configure { $0.apiRootURL = url; $0.conventions.updateMethod = .patch }
    /// ```
    public static func configure(_ change: (inout Configuration) -> Void) {
        ResourceStore.default.configure(change)
    }

    /// The default store's configuration.
    public static var configuration: Configuration { ResourceStore.default.configuration }
}
