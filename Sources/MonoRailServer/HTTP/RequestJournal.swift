import Hummingbird
import Synchronization

/// Every request the server received, as `"GET /trains/1"` lines, so tests and the demo can prove
/// how many requests an operation made (or that it made none).
public final class RequestJournal: Sendable {
    private let lines = Mutex<[String]>([])

    init() {}

    /// The requests so far, oldest first: method, path and query.
    public var entries: [String] { lines.withLock { $0 } }

    /// The number of requests so far.
    public var count: Int { lines.withLock { $0.count } }

    /// Forgets the requests so far.
    public func reset() { lines.withLock { $0.removeAll() } }

    func record(_ line: String) { lines.withLock { $0.append(line) } }
}

/// Writes each request into the journal before handling it.
struct RequestJournalMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let journal: RequestJournal

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        journal.record("\(request.method.rawValue) \(request.uri.description)")
        return try await next(request, context)
    }
}
