public import Foundation
public import HTTPTypes
public import MonoRailTransport

/// Adds header fields to every request: fixed defaults, or fields computed per request, such as the
/// current user's cookie (Objects' `currentUser`).
///
/// Fields the request already has are left alone, so a call can override a default.
///
/// ```swift
/// .headers(["X-Client": "MonoRail"])
/// .headers { await Session.current?.headers ?? [:] }
/// ```
public struct HeadersMiddleware: Middleware {
    private let provider: @Sendable () async throws -> HTTPFields

    /// Adds fixed fields.
    public init(_ fields: HTTPFields) {
        self.provider = { fields }
    }

    /// Adds fields computed for each request.
    public init(provider: @escaping @Sendable () async throws -> HTTPFields) {
        self.provider = provider
    }

    /// Adds the fields and calls the rest of the chain.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        var request = request
        for field in try await provider() where request.headerFields[field.name] == nil {
            request.headerFields.append(field)
        }
        return try await next(request, body, metadata)
    }
}

extension Middleware where Self == HeadersMiddleware {
    /// Adds fixed header fields to every request.
    public static func headers(_ fields: HTTPFields) -> HeadersMiddleware {
        HeadersMiddleware(fields)
    }

    /// Adds header fields computed for each request, such as the signed-in user's cookie.
    public static func headers(_ provider: @escaping @Sendable () async throws -> HTTPFields) -> HeadersMiddleware {
        HeadersMiddleware(provider: provider)
    }
}

/// Adds query parameters to every request (the seed's `additionalParameters()`); parameters the
/// request already has keep their value.
public struct ParametersMiddleware: Middleware {
    private let provider: @Sendable () async throws -> [String: JSONValue]

    /// Adds fixed parameters.
    public init(_ parameters: [String: JSONValue]) {
        self.provider = { parameters }
    }

    /// Adds parameters computed for each request, such as an access token.
    public init(provider: @escaping @Sendable () async throws -> [String: JSONValue]) {
        self.provider = provider
    }

    /// Adds the parameters and calls the rest of the chain.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata,
        next: MiddlewareNext
    ) async throws -> (HTTPResponse, Data) {
        var request = request
        var parameters = try await provider()
        let path = request.path ?? "/"
        if let query = path.split(separator: "?", maxSplits: 1).dropFirst().first {
            let present = Set(query.split(separator: "&").map { $0.split(separator: "=").first.map(String.init) ?? "" })
            parameters = parameters.filter { key, _ in
                !present.contains(APIPath.percentEncode(key))
                    && !present.contains { $0.hasPrefix(APIPath.percentEncode(key) + "%5B") }
            }
        }
        request.path = QueryEncoder.appending(parameters, to: path)
        return try await next(request, body, metadata)
    }
}

extension Middleware where Self == ParametersMiddleware {
    /// Adds fixed query parameters to every request.
    public static func parameters(_ parameters: [String: JSONValue]) -> ParametersMiddleware {
        ParametersMiddleware(parameters)
    }
}
