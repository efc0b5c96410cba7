import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import MonoRailTransport
import NIOCore

/// Refuses requests without `Authorization: Bearer <token>` with 401 and a JSON error.
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.headers[.authorization] == "Bearer \(token)" else {
            var response = JSONResponse.make(.unauthorized, ["error": "Unauthorized"])
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return try await next(request, context)
    }
}

/// Latency, failures and dropped connections, for testing clients against a misbehaving server.
///
/// Every knob is bounded: latency at 10 s, rates between 0 and 1.
public struct FaultInjection: Sendable, Hashable {
    /// Added before every response.
    public var latency: Duration
    /// The share of requests answered with ``failureStatus`` instead.
    public var failureRate: Double
    /// The status of injected failures: 500 or 503.
    public var failureStatus: Int
    /// The `Retry-After` seconds sent with injected failures, if any.
    public var retryAfter: Int?
    /// The share of requests whose connection is dropped halfway through the body.
    public var dropRate: Double
    /// How many requests, from the server's start, are answered with ``failureStatus`` before any
    /// other: a failure a test can count on, where ``failureRate`` is chance.
    public var failFirst: Int
    /// Responses held back after they are made, by request target (`"/trains/1?v=slow"`): the
    /// answer reflects the records when the request arrived and reaches the client late, so a later
    /// request's answer overtakes it — answers out of order, as a slow path delivers them.
    public var slowResponses: [String: Duration]

    /// Creates fault settings; all off by default.
    public init(
        latency: Duration = .zero, failureRate: Double = 0, failureStatus: Int = 503, retryAfter: Int? = nil,
        dropRate: Double = 0, failFirst: Int = 0, slowResponses: [String: Duration] = [:]
    ) {
        self.latency = min(max(latency, .zero), .seconds(10))
        self.failureRate = min(max(failureRate, 0), 1)
        self.failureStatus = failureStatus == 500 ? 500 : 503
        self.retryAfter = retryAfter.map { min(max($0, 0), 3600) }
        self.dropRate = min(max(dropRate, 0), 1)
        self.failFirst = min(max(failFirst, 0), 1000)
        self.slowResponses = slowResponses.mapValues { min(max($0, .zero), .seconds(10)) }
    }

    var isActive: Bool {
        latency > .zero || failureRate > 0 || dropRate > 0 || failFirst > 0 || !slowResponses.isEmpty
    }
}

struct FaultMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let faults: FaultInjection
    /// The requests still to fail of ``FaultInjection/failFirst``.
    private let leftToFail: Locked<Int>

    init(faults: FaultInjection) {
        self.faults = faults
        leftToFail = Locked(faults.failFirst)
    }

    struct DroppedConnection: Error {}

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        if faults.latency > .zero { try await Task.sleep(for: faults.latency) }
        let failsNow = leftToFail.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        if failsNow || (faults.failureRate > 0 && Double.random(in: 0..<1) < faults.failureRate) {
            var response = JSONResponse.make(.init(code: faults.failureStatus), ["error": "Injected failure"])
            if let retryAfter = faults.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        }
        let response = try await next(request, context)
        if let delay = faults.slowResponses[request.uri.description] { try await Task.sleep(for: delay) }
        guard faults.dropRate > 0, Double.random(in: 0..<1) < faults.dropRate else { return response }
        // Promise a body twice as long as the half that is sent, then drop the connection.
        let half = ByteBuffer(string: #"{"truncated":"#)
        return Response(
            status: response.status, headers: response.headers,
            body: ResponseBody(contentLength: half.readableBytes * 2) { writer in
                try await writer.write(half)
                throw DroppedConnection()
            })
    }
}
