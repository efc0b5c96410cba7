public import Foundation
public import HTTPTypes

/// Sends one HTTP request and returns the response with its collected body.
///
/// A transport is the lowest layer of MonoRail: it knows nothing about models, envelopes or retries.
/// MonoRail ships two transports, ``URLSessionTransport`` (the default on Apple platforms) and
/// `AsyncHTTPClientTransport` in the `MonoRailAsyncHTTPClient` module (the default on Linux, where it
/// measured about twice as fast as FoundationNetworking's URLSession on loopback).
///
/// ## Writing your own transport
///
/// Conform a `Sendable` type and honour the ``RequestMetadata`` you are given:
///
/// - stop the request when the calling task is cancelled and throw a ``TransportError`` with
///   code ``TransportError/Code/cancelled``;
/// - give up after ``RequestMetadata/timeout`` with ``TransportError/Code/timedOut``;
/// - collect at most ``RequestMetadata/maxResponseBodySize`` bytes and throw
///   ``TransportError/Code/responseTooLarge`` beyond that;
/// - report progress through ``RequestMetadata/uploadProgress`` and ``RequestMetadata/downloadProgress``;
/// - write a successful body to ``RequestMetadata/responseBodyFile`` as it arrives, when one is given.
///
/// ```swift
/// struct RecordingTransport: Transport {
///     let base: any Transport
///     func send(_ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata)
///         async throws -> (HTTPResponse, Data) {
///         print(request.method, request.path ?? "")
///         return try await base.send(request, body: body, metadata: metadata)
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Sends a request and returns the response head and its body.
    ///
    /// - Parameters:
    ///   - request: The request head. Its scheme, authority and path form the URL.
    ///   - body: The request body, or `nil` for none.
    ///   - metadata: Per-request settings: timeout, body size limit, progress handlers.
    /// - Returns: The response head and the collected response body.
    /// - Throws: ``TransportError`` when the exchange fails before a complete response was read.
    func send(_ request: HTTPRequest, body: RequestBody?, metadata: RequestMetadata) async throws -> (
        HTTPResponse, Data
    )
}
