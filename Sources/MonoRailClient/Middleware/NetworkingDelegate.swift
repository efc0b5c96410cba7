public import Foundation
public import HTTPTypes
public import MonoRailTransport

/// MonoRail's original hook for default headers, default parameters and response headers.
///
/// Every method has a default, so implement only what you need, then add
/// ``NetworkingDelegateMiddleware`` to the client's middleware:
///
/// ```swift
/// struct Session: NetworkingDelegate {
///     func additionalHeaders() -> HTTPFields { [.authorization: "Bearer \(token)"] }
///     func newResponse(headers: HTTPFields) { if let t = headers[.init("X-Token")!] { store(t) } }
/// }
/// configuration.middleware.append(NetworkingDelegateMiddleware(Session()))
/// ```
public protocol NetworkingDelegate: Sendable {
    /// Called with the header fields of every response.
    func newResponse(headers: HTTPFields)
    /// Header fields added to every request.
    func additionalHeaders() -> HTTPFields
    /// Query parameters added to every request.
    func additionalParameters() -> [String: JSONValue]
}

extension NetworkingDelegate {
    /// Does nothing.
    public func newResponse(headers: HTTPFields) {}
    /// No fields.
    public func additionalHeaders() -> HTTPFields { HTTPFields() }
    /// No parameters.
    public func additionalParameters() -> [String: JSONValue] { [:] }
}

/// Applies a ``NetworkingDelegate`` to every request and response.
public struct NetworkingDelegateMiddleware: Middleware {
    private let delegate: any NetworkingDelegate

    /// Wraps a delegate.
    public init(_ delegate: any NetworkingDelegate) {
        self.delegate = delegate
    }

    /// Adds the delegate's headers and parameters, then reports the response headers to it.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        let delegate = self.delegate
        let headers = HeadersMiddleware(delegate.additionalHeaders())
        let parameters = ParametersMiddleware(delegate.additionalParameters())
        let (response, data) = try await headers.intercept(request, body: body, metadata: metadata) {
            request, body, metadata in
            try await parameters.intercept(request, body: body, metadata: metadata, next: next)
        }
        delegate.newResponse(headers: response.headerFields)
        return (response, data)
    }
}
