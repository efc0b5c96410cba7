public import CoreMetrics
public import Foundation
public import HTTPTypes
public import Logging
public import Tracing

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
        /// How requests are sent and bodies read: base URL (``apiRootURL``), transport, coding,
        /// format, middleware, retries, de-duplication, timeouts, headers, logging and the clock.
        ///
        /// One ``/MonoRailClient/APIClient`` is made from it per store configuration and shared by every model
        /// whose ``ResourceModel/configure(_:)`` leaves it alone; a model that changes it gets a
        /// client of its own. Models send ``coding``, ``format`` and ``timeout`` with each request,
        /// so changing those alone shares the client too. The properties below (``apiRootURL``,
        /// ``coding``, …) read and write it. The conventions decide its envelope and validation
        /// statuses.
        public var client: APIClient.Configuration {
            get { storedClient }
            set {
                if newValue.format != storedClient.format { formatIsExplicit = true }
                storedClient = newValue
                clientRevision &+= 1
            }
        }
        private var storedClient: APIClient.Configuration
        /// Whether the app chose ``format``: then the ``conventions``' format does not replace it.
        private(set) var formatIsExplicit = false
        /// Counts changes to ``client`` that a model cannot make per request, so a model's
        /// configuration that made none can share the store's client.
        private(set) var clientRevision = 0
        /// Routes, body roots, update method and validation statuses. Default ``ServerConventions/rails``.
        public var conventions: ServerConventions
        /// How deep records may embed records (a train embedding cars embedding …) before a response
        /// is refused as a decoding failure. Default 32.
        public var maxEmbeddingDepth: Int = 32
        /// Where the records the server sent are kept, to answer reads as ``cachePolicy`` says and
        /// for ``ResourceModel/fetchedAt``: by default an ``InMemoryRecordCache`` of 32 MiB, made with
        /// the configuration; `SQLiteStorage(path:)` (module `MonoRailSQLite`) keeps them across
        /// launches; `nil` keeps nothing, and then only ``CachePolicy/networkOnly`` can answer.
        ///
        /// ```swift
        /// MonoRail.configure { $0.storage = try SQLiteStorage(path: path) }
        /// ```
        public var storage: (any RecordCache)? = InMemoryRecordCache()
        /// Where reads look for records when a call names no policy. Default
        /// ``CachePolicy/networkOnly``; a model may choose its own in ``ResourceModel/configure(_:)``.
        public var cachePolicy: CachePolicy = .networkOnly
        /// How long a cached record may answer reads, by when it was fetched; `nil` (the default)
        /// for as long as the cache keeps it. A record past it is dropped from the cache when a read
        /// finds it. Per model in ``ResourceModel/configure(_:)``.
        public var cacheTimeToLive: Duration?
        /// How long a ``CachePolicy/networkFirst`` read waits for the server before it answers from
        /// the cache, when the cache has an answer; default 3 seconds. A network that refuses or
        /// cannot route the connection answers at once; a dead one (a black-holed address, a captive
        /// Wi-Fi) answers nothing, and this is what keeps a screen from showing a spinner for as long
        /// as the request's timeout and its retries last. Past it, the request goes on in the
        /// background (``ResourceResponse/revalidation``) and merges its answer when it comes. A read
        /// the cache cannot answer waits for the network, retries included.
        public var offlineDeadline: Duration = .seconds(3)
        /// The wall clock: ``ResourceModel/fetchedAt`` and a cached answer's age against
        /// ``cacheTimeToLive``. It never decides which of two answers is newer (``FetchStamp``), so
        /// a clock set back keeps nothing from being merged; tests inject their own.
        public var wallClock: @Sendable () -> Date = { Date() }
        /// Downloaded files, emptied with the records by ``ResourceStore/clear()``; `nil` for none.
        public var fileCache: FileCache?
        /// How creates, saves and deletes reach the server: sent at once (``WritePolicy/direct``,
        /// the default), or kept in the store's ``ResourceStore/outbox`` when the server cannot be
        /// reached (``WritePolicy/queuedWhenOffline``) or always (``WritePolicy/queued``).
        ///
        /// A queued policy needs a ``storage`` that keeps writes across a restart (an
        /// ``OutboxStorage``, such as `SQLiteStorage`): with any other, the first write throws
        /// ``/MonoRailClient/APIError/Code/invalidConfiguration``, unless ``allowsQueuedWritesLostOnQuit`` says to
        /// keep them in memory.
        public var writePolicy: WritePolicy = .direct
        /// Where the store tells the app of changes — Observation, the update streams, live
        /// queries, outbox events — and runs the callback style's `success:` and `failure:`
        /// closures: ``Delivery/immediate`` (the default, at once on the task that made the change)
        /// or ``Delivery/mainActor``. The store's setting: a model whose ``ResourceModel/configure(_:)``
        /// changes it has its actions refused.
        public var delivery: Delivery = .immediate
        /// Whether a queued ``writePolicy`` may keep writes in memory when ``storage`` cannot keep
        /// them: they are then lost when the app quits or is killed before the server took them.
        /// Default `false`: such a store refuses to queue. For previews, tests and apps that
        /// accept the loss.
        public var allowsQueuedWritesLostOnQuit = false
        /// When the outbox stops sending a write the server keeps failing and parks it
        /// (``Outbox/parked``): after ``OutboxLimits/maximumFailures`` answers that were failures
        /// (`5xx`, `408`, `425`, `429`, a `409` retried, an answer that cannot be read), or once the
        /// write is older than ``OutboxLimits/maximumAge`` when one more comes. A server that cannot
        /// be reached at all parks nothing: the writes wait for it. A refusal (`4xx`) parks at once.
        public var outboxLimits = OutboxLimits()
        /// Whether saves and deletes send `If-Match` with the entity tag of the record as the app last
        /// had it from the server (its own `GET`, or the answer to its last write), so a server that
        /// honours it refuses with `412 Precondition Failed` to overwrite a change made meanwhile.
        /// Default `false`. A refused write rolls back; ``ResourceModel/resolve(keepLocal:)`` settles it.
        public var conditionalWrites = false
        /// Whether an authoritative list — every record of the model (`Train.get()`,
        /// `Train.getAll()`, `Train.query()`), or a query made with `authoritative: true` — removes
        /// the records it no longer holds, once its answer proves it is whole
        /// (``ListExtent/whole``): a server that pages by default answers `Train.get()` with a first
        /// page, which prunes nothing; `Train.getAll()` and a query with every page loaded prune at
        /// the list's end. What is pruned goes from the identity map and the record cache, with a
        /// ``ResourceUpdate/Kind/deleted`` update and ``ResourceModel/isDeleted`` on instances the app
        /// still holds. Records fetched after the list was asked for, and records with writes the
        /// outbox keeps, stay. Default `false`; a model opts in in ``ResourceModel/configure(_:)``.
        public var prunesOrphans = false
        /// The models known by name, whose records may come side-loaded with any model's and whose
        /// names polymorphic references hold.
        public var models = ModelRegistry()
        /// Where the server pushes changes, read by ``ResourceStore/liveUpdates``; `nil` (the default)
        /// for none.
        ///
        /// ```swift
        /// MonoRail.configure { $0.liveUpdates = .serverSentEvents(path: "/changes") }
        /// ```
        public var liveUpdates: LiveUpdatesConfiguration?
        /// Bounds on what the server may send that no response size limit covers.
        public var limits = Limits()

        /// Bounds on what the server may send, beyond ``maxResponseBodySize``.
        public struct Limits: Sendable, Hashable {
            /// The largest pushed event read (``ResourceStore/liveUpdates``): a larger one is skipped
            /// and reported, its bytes never held. Default 4 MiB.
            public var maxEventSize: Int = 4 << 20

            /// The defaults.
            public init() {}
        }

        /// The URL every model path is joined to. Required before the first request.
        public var apiRootURL: URL? {
            get { client.baseURL }
            set { client.baseURL = newValue }
        }
        /// Sends the requests; `nil` uses ``MonoRail/defaultTransport``.
        public var transport: (any Transport)? {
            get { client.transport }
            set { client.transport = newValue }
        }
        /// Key mapping (snake_case), date formats and coercion (strict by default).
        public var coding: CodingOptions {
            get { storedClient.coding }
            set { storedClient.coding = newValue }
        }
        /// The body format and the `Accept` asked for: ``/MonoRailClient/WireFormat/json`` (default),
        /// ``/MonoRailClient/WireFormat/messagePack``, ``/MonoRailClient/WireFormat/formURLEncoded`` or ``/MonoRailClient/WireFormat/multipart``.
        /// Models with a ``/MonoRailClient/FileUpload`` to send go out as `multipart/form-data` whatever this says.
        ///
        /// Conventions with a format of their own (``ServerConventions/objects``: MessagePack) use it
        /// unless this is set, before or after them: `$0.conventions = .objects; $0.format = .json`
        /// speaks JSON.
        public var format: WireFormat {
            get { storedClient.format }
            set {
                storedClient.format = newValue
                formatIsExplicit = true
            }
        }
        /// Middleware, outermost first: headers, parameters, hooks, logging.
        public var middleware: [any Middleware] {
            get { client.middleware }
            set { client.middleware = newValue }
        }
        /// MonoRail's original delegate for default headers, default parameters and response
        /// headers, applied outside all ``middleware``; ``Networking/delegate`` sets the default
        /// store's.
        public var networkingDelegate: (any NetworkingDelegate)? {
            get { client.networkingDelegate }
            set { client.networkingDelegate = newValue }
        }
        /// Tokens that refresh: the access token on every request to the API's origin, one refresh
        /// on a `401` for every request in flight (see ``/MonoRailClient/Authentication``). While the
        /// server answers `401`, kept writes wait in the ``Outbox``, not refused, until
        /// ``/MonoRailClient/Authentication/tokenDidChange()`` or a refresh brings a token. Default `nil`.
        ///
        /// ```swift
        /// MonoRail.configure { $0.authentication = Authentication(source: session) }
        /// MonoRail.configure { $0.middleware.append(.authentication(session)) }   // the same
        /// ```
        ///
        /// Reads the one in ``middleware`` when it has one and this was not set.
        public var authentication: Authentication? {
            get { client.authentication ?? client.middleware.lazy.compactMap { $0 as? Authentication }.first }
            set { client.authentication = newValue }
        }
        /// When to retry. Default ``/MonoRailClient/RetryPolicy/default``: idempotent requests on transient failures.
        public var retryPolicy: RetryPolicy {
            get { client.retryPolicy }
            set { client.retryPolicy = newValue }
        }
        /// Whether concurrent identical GETs share one request. Default `true`.
        public var deduplicatesRequests: Bool {
            get { client.deduplicatesRequests }
            set { client.deduplicatesRequests = newValue }
        }
        /// The timeout for each attempt; `nil` uses the transport's.
        public var timeout: Duration? {
            get { storedClient.timeout }
            set { storedClient.timeout = newValue }
        }
        /// The largest response body collected.
        public var maxResponseBodySize: Int {
            get { client.maxResponseBodySize }
            set { client.maxResponseBodySize = newValue }
        }
        /// Header fields sent with every request unless the request sets them. `Accept` follows
        /// ``format`` unless set here.
        public var defaultHeaders: HTTPFields {
            get { client.defaultHeaders }
            set { client.defaultHeaders = newValue }
        }
        /// Where requests are logged.
        public var logger: Logger {
            get { client.logger }
            set { client.logger = newValue }
        }
        /// The level of the one-line request log.
        public var requestLogLevel: Logger.Level {
            get { client.requestLogLevel }
            set { client.requestLogLevel = newValue }
        }
        /// The clock retries wait on; tests inject their own.
        public var clock: any Clock<Duration> {
            get { client.clock }
            set { client.clock = newValue }
        }
        /// Where spans go: one per model action, per request attempt, per replay of a kept write and
        /// per run of pushed changes (<doc:Observability>). `nil` (the default) uses the tracer
        /// `withTracer(_:_:)` binds for the task, else the one the process bootstrapped; with
        /// neither, no span is made.
        public var tracer: (any Tracer)? {
            get { client.tracer }
            set { client.tracer = newValue }
        }
        /// Where measurements go: request durations, cache answers, the outbox, pushed changes, the
        /// identity map, decode failures (<doc:Observability>). `nil` (the default) uses
        /// `MetricsSystem.factory` as it is when the store makes its client.
        public var metricsFactory: (any MetricsFactory)? {
            get { client.metricsFactory }
            set { client.metricsFactory = newValue }
        }

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
            self.init(
                client: APIClient.Configuration(
                    baseURL: apiRootURL, transport: transport, coding: coding, middleware: middleware,
                    retryPolicy: retryPolicy, deduplicatesRequests: deduplicatesRequests, timeout: timeout,
                    maxResponseBodySize: maxResponseBodySize, defaultHeaders: defaultHeaders, logger: logger,
                    requestLogLevel: requestLogLevel),
                conventions: conventions)
        }

        /// Creates a configuration around a client configuration.
        ///
        /// - Parameters:
        ///   - client: How requests are sent; its `baseURL` is the API root.
        ///   - conventions: How the server shapes endpoints and bodies.
        public init(client: APIClient.Configuration, conventions: ServerConventions = .rails) {
            self.storedClient = client
            self.conventions = conventions
        }

        /// The client settings this configuration amounts to: ``client`` with the transport
        /// defaulted to ``MonoRail/defaultTransport`` and the envelope and validation statuses of
        /// the ``conventions``.
        ///
        /// - Throws: ``/MonoRailClient/APIError`` with ``/MonoRailClient/APIError/Code/invalidRequest`` when ``apiRootURL`` is not set.
        public func clientConfiguration() throws -> APIClient.Configuration {
            guard apiRootURL != nil else { throw Self.noAPIRoot }
            return resolvedClient
        }

        /// ``client`` as the store's ``/MonoRailClient/APIClient`` is made from it, with or without an API root.
        var resolvedClient: APIClient.Configuration {
            var resolved = client
            resolved.transport = resolved.transport ?? MonoRail.defaultTransport
            resolved.envelope.rootNamespace = conventions.rootNamespace
            resolved.validationStatuses = conventions.validationStatuses
            return resolved
        }

        /// The error of a model that tries to send before an API root is configured.
        static let noAPIRoot = APIError(
            .invalidRequest,
            "no API root URL is configured: call MonoRail.register(apiRootURL:) or set apiRootURL "
                + "in MonoRail.configure { … } first")
    }

    /// Points the default store at an API (the seed's `MonoRail.register(apiRootUrl:)`).
    ///
    /// ```swift
    /// MonoRail.register(apiRootURL: URL(string: "http://127.0.0.1:3000")!)
    /// ```
    public static func register(apiRootURL: URL) {
        ResourceStore.default.configure { $0.apiRootURL = apiRootURL }
    }

    /// Registers models with the default store by name: see ``ModelRegistry``.
    ///
    /// ```swift
    /// MonoRail.register(models: Activity.self, User.self)
    /// ```
    public static func register(models: any ResourceModel.Type...) {
        ResourceStore.default.configure { $0.models.register(models) }
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

extension MonoRail.Configuration {
    /// Why writes of a model with `writePolicy` cannot be queued as this store keeps them, or `nil`
    /// when they can.
    func queuedWritesProblem(for writePolicy: WritePolicy) -> String? {
        guard writePolicy != .direct, !(storage is any OutboxStorage), !allowsQueuedWritesLostOnQuit else { return nil }
        let kept = storage.map { "\(type(of: $0))" } ?? "no storage"
        return """
            writePolicy .\(writePolicy) keeps writes until the server takes them, but \(kept) cannot keep them \
            across a restart: set storage to a SQLiteStorage, or allowsQueuedWritesLostOnQuit = true to keep \
            them in memory and lose them when the app quits
            """
    }
}
