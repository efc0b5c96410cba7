public import Foundation
public import HTTPTypes
public import MonoRailTransport

/// The rest of the chain, as seen by a middleware.
public typealias MiddlewareNext =
    @Sendable (HTTPRequest, RequestBody?, RequestMetadata) async throws -> (HTTPResponse, Data)

/// A step around every request an ``APIClient`` sends: it can change the request, observe or
/// change the response, or answer without calling `next`.
///
/// Middleware runs in the order listed in ``APIClient/Configuration/middleware``: the first sees the
/// request first and the response last. Retries happen inside the chain, so each middleware sees a
/// call once, however many attempts it takes.
///
/// MonoRail ships middleware for the usual jobs: ``HeadersMiddleware`` (default and per-user headers),
/// ``ParametersMiddleware`` (default query parameters), ``HooksMiddleware`` (before/after hooks),
/// ``ResponseObserverMiddleware`` and ``NetworkingDelegateMiddleware``. Write your own like this:
///
/// ```swift
/// struct APIKeyMiddleware: Middleware {
///     let key: String
///     func intercept(_ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata,
///                    next: MiddlewareNext) async throws -> (HTTPResponse, Data) {
///         var request = request
///         request.headerFields[HTTPField.Name("X-API-Key")!] = key
///         return try await next(request, body, metadata)
///     }
/// }
/// ```
public protocol Middleware: Sendable {
    /// Handles one request.
    ///
    /// - Parameters:
    ///   - request: The request head, with the full URL.
    ///   - body: The body, if any.
    ///   - metadata: Typed context: operation name, timeout, progress handlers.
    ///   - next: The rest of the chain; call it at most once per attempt you want to make.
    /// - Returns: The response and its body.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data)
}
