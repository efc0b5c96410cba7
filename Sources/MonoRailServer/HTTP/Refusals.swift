import Hummingbird
import MonoRailClient
import MonoRailTransport

/// Requests the server answers with a chosen status whatever they carry — a server bug on one
/// payload, for testing how a client lives with a write that can never go through. Set and lifted
/// while the server runs.
///
/// ```swift
/// server.refusals.refuse("PUT /trains/3", status: 500)   // every attempt, until lifted
/// server.refusals.lift("PUT /trains/3")
/// ```
public final class Refusals: Sendable {
    private let statuses = Locked<[String: Int]>([:])

    init() {}

    /// Answers every request with this method and path (no query) with `status` (400–599) and a
    /// JSON error body.
    public func refuse(_ request: String, status: Int) {
        statuses.withLock { $0[request] = min(max(status, 400), 599) }
    }

    /// Answers the request as usual again.
    public func lift(_ request: String) {
        statuses.withLock { $0[request] = nil }
    }

    func status(for request: String) -> Int? {
        statuses.withLock { $0.isEmpty ? nil : $0[request] }
    }
}

/// Answers refused requests before any route sees them.
struct RefusalMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let refusals: Refusals

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let status = refusals.status(for: "\(request.method.rawValue) \(request.uri.path)") else {
            return try await next(request, context)
        }
        return JSONResponse.make(.init(code: status), ["error": "Refused by the test", "status": .int(Int64(status))])
    }
}
