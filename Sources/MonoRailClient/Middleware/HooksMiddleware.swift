public import Foundation
public import HTTPTypes
public import MonoRailTransport

/// Before- and after-request hooks (ApiModel's `beforeRequest` and `afterRequest`).
///
/// ```swift
/// .hooks(before: { request in
///     request.headerFields[.authorization] = "Bearer \(token)"
/// }, after: { request, response, body in
///     print("\(request.method) \(request.path ?? "") → \(response.status)")
/// })
/// ```
public struct HooksMiddleware: Middleware {
    /// Changes the request before it is sent.
    public typealias Before = @Sendable (inout HTTPRequest) async throws -> Void
    /// Sees each response.
    public typealias After = @Sendable (HTTPRequest, HTTPResponse, Data) async -> Void

    private let before: Before?
    private let after: After?

    /// Creates hooks; either may be `nil`.
    public init(before: Before? = nil, after: After? = nil) {
        self.before = before
        self.after = after
    }

    /// Runs the hooks around the rest of the chain.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        var request = request
        try await before?(&request)
        let (response, data) = try await next(request, body, metadata)
        await after?(request, response, data)
        return (response, data)
    }
}

extension Middleware where Self == HooksMiddleware {
    /// Before- and after-request hooks.
    public static func hooks(before: HooksMiddleware.Before? = nil, after: HooksMiddleware.After? = nil)
        -> HooksMiddleware
    {
        HooksMiddleware(before: before, after: after)
    }
}

/// Sees the status and headers of every response, error statuses included (MonoRail's
/// `NetworkingDelegate.newResponse(headers:)`), for example to pick up a rotated session token.
public struct ResponseObserverMiddleware: Middleware {
    private let observer: @Sendable (HTTPResponse) async -> Void

    /// Creates an observer.
    public init(_ observer: @escaping @Sendable (HTTPResponse) async -> Void) {
        self.observer = observer
    }

    /// Calls the rest of the chain, then the observer.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        let (response, data) = try await next(request, body, metadata)
        await observer(response)
        return (response, data)
    }
}

extension Middleware where Self == ResponseObserverMiddleware {
    /// Observes the status and headers of every response.
    public static func observeResponses(_ observer: @escaping @Sendable (HTTPResponse) async -> Void)
        -> ResponseObserverMiddleware
    {
        ResponseObserverMiddleware(observer)
    }
}
