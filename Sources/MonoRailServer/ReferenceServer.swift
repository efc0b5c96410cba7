public import CoreMetrics
public import Foundation
import Hummingbird
public import Logging
public import Tracing

/// MonoRail's reference server: a real HTTP backend that speaks the Rails conventions for the
/// resources of a ``ServerSchema``, storing them in SQLite.
///
/// ```swift
/// let server = try ReferenceServer(schema: .trains, configuration: .init(port: 0))
/// let running = try await server.start()
/// print(running.baseURL)  // http://127.0.0.1:54321
/// ```
public struct ReferenceServer: Sendable {
    /// Where and how the server listens and stores.
    public struct Configuration: Sendable {
        /// The address to bind; loopback by default.
        public var host: String
        /// The port; 0 picks a free one.
        public var port: Int
        /// The SQLite file, or `:memory:`.
        public var databasePath: String
        /// The largest request body accepted.
        public var maxBodySize: Int
        /// Where the one-line-per-request log goes; `nil` for none.
        public var logger: Logger?
        /// How bodies are wrapped. Default ``ServerEnvelope/rails``.
        public var envelope: ServerEnvelope
        /// When set, every request needs `Authorization: Bearer <token>`; others get 401.
        public var bearerToken: String?
        /// When set, every request needs an access token this issuer handed out at
        /// `POST /oauth/token` and that has not expired; others get 401. Default `nil`.
        public var expiringTokens: TokenIssuer?
        /// Latency, failures and dropped connections for client tests; all off by default.
        public var faults: FaultInjection
        /// Answers CORS preflights and adds `Access-Control-Allow-Origin: *`; off by default.
        public var allowsCORS: Bool
        /// Where `POST /uploads` stores files; by default a new temporary folder for each server,
        /// removed when it stops.
        public var uploadsDirectory: URL
        /// The folder made up when none was given, which each server replaces with its own.
        var defaultUploadsDirectory: URL?
        /// The largest upload accepted.
        public var maxUploadSize: Int
        /// The page size of an index asked for with no page: `25` pages every list by default, as
        /// Rails apps with Kaminari or pagy and DRF with `PAGE_SIZE` do; `nil` (the default) lists
        /// every record unless a page is asked for.
        public var defaultPageSize: Int?
        /// How the index pages its lists: with header fields (the default), not at all, or capped
        /// silently (``IndexPaging``).
        public var indexPaging: IndexPaging = .headers
        /// How `GET /changes` streams the change log: heartbeats, clients, retention.
        public var changeFeed: ChangeFeedSettings
        /// Where the server's spans go: one per request (Hummingbird's tracing middleware, continuing
        /// the trace the request's `traceparent` names) and one per SQL statement under it. `nil` (the
        /// default) uses the tracer the process bootstrapped, if any.
        public var tracer: (any Tracer)?
        /// Where the server's request measurements go (Hummingbird's metrics middleware:
        /// `http.server.active_requests`, `hb.requests`, `http.server.request.duration`). `nil` (the
        /// default) uses the bootstrapped factory, if any.
        public var metricsFactory: (any MetricsFactory)?

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1", port: Int = 3000, databasePath: String = ":memory:",
            maxBodySize: Int = 10 * 1024 * 1024, logger: Logger? = nil, envelope: ServerEnvelope = .rails,
            bearerToken: String? = nil, faults: FaultInjection = FaultInjection(), allowsCORS: Bool = false,
            uploadsDirectory: URL? = nil, maxUploadSize: Int = 1 << 30, defaultPageSize: Int? = nil,
            expiringTokens: TokenIssuer? = nil, changeFeed: ChangeFeedSettings = ChangeFeedSettings()
        ) {
            self.changeFeed = changeFeed
            self.expiringTokens = expiringTokens
            self.defaultPageSize = defaultPageSize.map { max(1, $0) }
            self.uploadsDirectory = uploadsDirectory ?? Self.newUploadsDirectory()
            self.defaultUploadsDirectory = uploadsDirectory == nil ? self.uploadsDirectory : nil
            self.maxUploadSize = maxUploadSize
            self.host = host
            self.port = port
            self.databasePath = databasePath
            self.maxBodySize = maxBodySize
            self.logger = logger
            self.envelope = envelope
            self.bearerToken = bearerToken
            self.faults = faults
            self.allowsCORS = allowsCORS
        }

        static func newUploadsDirectory() -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("monorail-uploads-\(UUID().uuidString)")
        }

        /// The server's own uploads folder, when the configuration left it to the default: one
        /// per server, so that one server stopping removes no other's files.
        mutating func takeUploadsDirectory() -> URL? {
            guard let made = defaultUploadsDirectory, made == uploadsDirectory else { return nil }
            uploadsDirectory = Self.newUploadsDirectory()
            defaultUploadsDirectory = uploadsDirectory
            return uploadsDirectory
        }
    }

    /// The records.
    public let store: RecordStore
    /// The configuration.
    public let configuration: Configuration
    /// Every request received.
    public let journal = RequestJournal()
    /// Requests answered with a chosen status, for tests.
    public let refusals = Refusals()

    /// Opens the database and prepares the routes.
    ///
    /// - Throws: ``SchemaError`` or a database error.
    public init(schema: ServerSchema, configuration: Configuration = Configuration()) throws {
        try self.init(
            store: RecordStore(
                schema: schema, path: configuration.databasePath, changeRetention: configuration.changeFeed.retention),
            configuration: configuration)
    }

    /// Serves the records of a store opened elsewhere, such as one on PostgreSQL
    /// (MonoRailServerPostgres); `configuration.databasePath` is not read. Stopping the server
    /// closes the store.
    public init(store: RecordStore, configuration: Configuration = Configuration()) {
        self.store = store
        var configuration = configuration
        ownUploadsDirectory = configuration.takeUploadsDirectory()
        self.configuration = configuration
    }

    /// The uploads folder this server made up, removed when it stops: the files in it are reachable
    /// only through this server.
    private let ownUploadsDirectory: URL?

    private func makeApplication(onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let router = Router()
        // Outermost, so that the request's span holds everything the server does for it.
        if configuration.tracer != nil || !(InstrumentationSystem.tracer is NoOpTracer) {
            router.add(middleware: TracingMiddleware())
        }
        if configuration.metricsFactory != nil || !(MetricsSystem.factory is NOOPMetricsHandler) {
            router.add(middleware: MetricsMiddleware())
        }
        router.add(middleware: RequestJournalMiddleware(journal: journal))
        router.add(middleware: RefusalMiddleware(refusals: refusals))
        if let logger = configuration.logger {
            router.add(middleware: RequestLogMiddleware(logger: logger))
        }
        router.add(middleware: JSONErrorMiddleware())
        if configuration.allowsCORS {
            router.add(middleware: CORSMiddleware(allowOrigin: .all))
        }
        if let token = configuration.bearerToken {
            router.add(middleware: BearerTokenMiddleware(token: token))
        }
        if let issuer = configuration.expiringTokens {
            router.add(middleware: ExpiringTokenMiddleware(issuer: issuer))
        }
        if configuration.faults.isActive {
            router.add(middleware: FaultMiddleware(faults: configuration.faults))
        }
        UploadRoutes(directory: configuration.uploadsDirectory, maxUploadSize: configuration.maxUploadSize)
            .install(on: router)
        ChangeFeedRoutes(store: store, settings: configuration.changeFeed).install(on: router)
        let records = RecordRoutes(
            store: store, maxBodySize: configuration.maxBodySize, envelope: configuration.envelope,
            uploadsDirectory: configuration.uploadsDirectory, maxUploadSize: configuration.maxUploadSize,
            defaultPageSize: configuration.defaultPageSize, indexPaging: configuration.indexPaging)
        if configuration.envelope == .objects {
            ObjectsRoutes(store: store, records: records).install(on: router)
        } else if configuration.envelope == .jsonAPI {
            JSONAPIRoutes(store: store, records: records).install(on: router)
        } else {
            records.install(on: router)
        }
        var quiet = Logger(label: "MonoRailServer")
        quiet.logLevel = .critical
        return Application(
            router: router,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "MonoRail"),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? 0) },
            logger: configuration.logger ?? quiet)
    }

    /// Serves until the process gets SIGINT or SIGTERM, then stops cleanly.
    ///
    /// - Parameter onRunning: Called with the port once the server listens.
    public func run(onRunning: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        defer {
            store.close()
            removeOwnUploads()
        }
        let application = makeApplication(onRunning: onRunning)
        try await instrumented { try await application.runService() }
    }

    /// Runs `body` with the configured tracer and metrics factory as the task's, so that the
    /// middleware and the statements of every request use them: the server's tasks inherit them.
    private func instrumented(_ body: () async throws -> Void) async throws {
        switch (configuration.tracer, configuration.metricsFactory) {
        case (let tracer?, let factory?):
            try await withTracer(tracer) { try await withMetricsFactory(factory) { try await body() } }
        case (let tracer?, nil):
            try await withTracer(tracer) { try await body() }
        case (nil, let factory?):
            try await withMetricsFactory(factory) { try await body() }
        case (nil, nil):
            try await body()
        }
    }

    fileprivate func removeOwnUploads() {
        if let ownUploadsDirectory { try? FileManager.default.removeItem(at: ownUploadsDirectory) }
    }

    /// Starts serving in the background, for tests and the demo.
    ///
    /// - Returns: The running server, with its port.
    public func start() async throws -> RunningReferenceServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = makeApplication { port in
            continuation.yield(port)
            continuation.finish()
        }
        let task = Task { try await instrumented { try await application.runService(gracefulShutdownSignals: []) } }
        for await port in ports {
            return RunningReferenceServer(port: port, task: task, server: self)
        }
        throw CancellationError()
    }
}

/// A reference server serving in the background.
public struct RunningReferenceServer: Sendable {
    /// The port it listens on.
    public let port: Int
    let task: Task<Void, any Error>
    let server: ReferenceServer
    /// Its records.
    public var store: RecordStore { server.store }
    /// Every request it received.
    public var journal: RequestJournal { server.journal }
    /// Requests it answers with a chosen status.
    public var refusals: Refusals { server.refusals }
    /// Where it stores uploaded files: the configuration's folder, or else its own, removed by
    /// ``stop()``.
    public var uploadsDirectory: URL { server.configuration.uploadsDirectory }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// Stops serving.
    public func stop() async {
        // Change streams never end by themselves; the server waits for its requests to end.
        server.store.changeSignal.close()
        task.cancel()
        _ = await task.result
        server.store.close()
        server.removeOwnUploads()
    }
}
