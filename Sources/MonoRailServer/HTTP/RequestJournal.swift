import Hummingbird
import MonoRailTransport

/// Every request the server received, as `"GET /trains/1"` lines, so tests and the demo can prove
/// how many requests an operation made (or that it made none).
public final class RequestJournal: Sendable {
    /// One request as received.
    public struct Request: Sendable, Hashable {
        /// `"GET /trains/1"`: method, path and query.
        public var line: String
        /// The `Content-Type` header, if any.
        public var contentType: String?
        /// The `Accept` header, if any.
        public var accept: String?
        /// The `If-None-Match` header, if any.
        public var ifNoneMatch: String?
        /// The `If-Modified-Since` header, if any.
        public var ifModifiedSince: String?
        /// The `Authorization` header, if any: whether the app's credentials came along.
        public var authorization: String?
        /// The `Last-Event-ID` header, if any: where a change stream resumed.
        public var lastEventID: String?
    }

    private let requestsSeen = Locked<[Request]>([])

    init() {}

    /// The requests so far, oldest first: method, path and query.
    public var entries: [String] { requestsSeen.withLock { $0.map(\.line) } }

    /// The requests so far with their content negotiation headers.
    public var requests: [Request] { requestsSeen.withLock { $0 } }

    /// The number of requests so far.
    public var count: Int { requestsSeen.withLock { $0.count } }

    /// Forgets the requests so far.
    public func reset() { requestsSeen.withLock { $0.removeAll() } }

    func record(_ request: Request) { requestsSeen.withLock { $0.append(request) } }
}

/// Writes each request into the journal before handling it.
struct RequestJournalMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let journal: RequestJournal

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        journal.record(
            RequestJournal.Request(
                line: "\(request.method.rawValue) \(request.uri.description)",
                contentType: request.headers[.contentType], accept: request.headers[.accept],
                ifNoneMatch: request.headers[.ifNoneMatch], ifModifiedSince: request.headers[.ifModifiedSince],
                authorization: request.headers[.authorization],
                lastEventID: lastEventIDField.flatMap { request.headers[$0] }))
        return try await next(request, context)
    }
}
