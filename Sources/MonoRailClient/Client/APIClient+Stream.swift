import Foundation
import HTTPTypes
public import MonoRailTransport

extension APIClient {
    /// Sends a request whose answer does not end — an event stream — and returns once its head
    /// arrived, with its body to read as it comes.
    ///
    /// The request passes through the middleware, the authentication and the request log as any
    /// other (a `401` refreshes the token and opens the stream again), not through retries or
    /// de-duplication: what to do when a stream cannot be opened is the caller's. Middleware sees
    /// the response head with an empty body. The request timeout bounds waiting for the head only.
    ///
    /// ```swift
    /// var request = APIRequest(method: .get, path: "/changes")
    /// request.headers[.accept] = "text/event-stream"
    /// let (response, body) = try await api.stream(request)
    /// var parser = ServerSentEventParser(maxEventSize: 1 << 20)
    /// for try await chunk in body { for output in parser.parse(chunk) { … } }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request; a body is not sent.
    ///   - maxBufferedSize: The most bytes received and not yet read before the body fails with
    ///     ``APIError/Code/responseTooLarge``: what a reader slower than the network may cost.
    /// - Returns: The response, its body empty, and the body as it arrives.
    /// - Throws: ``APIError``: ``APIError/Code/invalidConfiguration`` when the transport cannot
    ///   stream (it is no ``/MonoRailTransport/StreamingTransport``); for a non-2xx status, as
    ///   ``send(_:)`` throws, its error body read; a transport code when no head arrived.
    public func stream(_ request: APIRequest, maxBufferedSize: Int = 8 << 20) async throws -> (
        response: APIResponse, body: ResponseBodyStream
    ) {
        var head: HTTPRequest?
        do {
            guard let streaming = transport as? any StreamingTransport else {
                throw APIError(
                    .invalidConfiguration,
                    "the transport \(type(of: transport)) cannot read a response as it arrives; an event stream needs "
                        + "a StreamingTransport, such as URLSessionTransport or AsyncHTTPClientTransport")
            }
            var bodiless = request
            bodiless.body = nil
            let (built, _) = try makeRequest(bodiless)
            head = built
            let metadata = RequestMetadata(
                operationName: request.options.operationName, urlTemplate: request.options.urlTemplate,
                timeout: request.options.timeout ?? configuration.timeout, maxResponseBodySize: maxBufferedSize)
            let errorBodyLimit = configuration.maxResponseBodySize
            let opened = Locked<ResponseBodyStream?>(nil)
            // The attempt's span ends with the response's head: the stream itself may never end.
            let chain = Self.makeChain(
                configuration, transport: transport, telemetry: telemetry, coalescer: coalescer, deduplicates: false,
                retryPolicy: RetryPolicy.none,
                anonymous: request.options.isAnonymous
            ) { request, _, metadata in
                let (response, body) = try await streaming.open(request, metadata: metadata)
                guard response.status.kind == .successful else {
                    // Refused: its error body is short, and says why.
                    return (response, try await body.collect(upTo: errorBodyLimit))
                }
                opened.withLock { $0 = body }
                return (response, Data())
            }
            let (response, data) = try await chain(built, nil, metadata)
            let result = APIResponse(
                request: built, response: response, body: data, decoder: responseDecoder, roots: request.responseRoots)
            try validateStatus(of: result, for: request)
            guard let body = opened.withLock({ $0.take() }) else {
                throw APIError(
                    .invalidResponse, "a middleware answered the stream's request itself; there is no stream to read")
            }
            return (result, body)
        } catch {
            throw APIError.wrapping(error, request: head)
        }
    }
}
