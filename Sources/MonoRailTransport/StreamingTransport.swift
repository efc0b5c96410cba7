public import Foundation
public import HTTPTypes

/// A transport that can hand a response body over as it arrives, for responses that do not end: an
/// event stream (`text/event-stream`) that live updates read.
///
/// Both of MonoRail's transports conform: ``URLSessionTransport`` through its session delegate (on
/// Apple platforms and on Linux, where `URLSession.bytes(for:)` does not exist), and
/// `AsyncHTTPClientTransport` through AsyncHTTPClient's streamed body.
///
/// An implementation:
///
/// - returns once the response head arrived, and gives up with ``TransportError/Code/timedOut`` when
///   it did not within ``RequestMetadata/timeout``: the timeout bounds connecting, not the body;
/// - stops the request when the calling task is cancelled before the head, when the task reading
///   the body is cancelled, and when the body's reader stops iterating;
/// - keeps at most ``RequestMetadata/maxResponseBodySize`` bytes that were received and not yet read,
///   failing the body with ``TransportError/Code/responseTooLarge`` beyond that, so a reader slower
///   than the network costs bounded memory.
public protocol StreamingTransport: Transport {
    /// Sends a request without a body and returns the response head and its body as it arrives.
    ///
    /// - Parameters:
    ///   - request: The request head. Its scheme, authority and path form the URL.
    ///   - metadata: Per-request settings: ``RequestMetadata/timeout`` for the head,
    ///     ``RequestMetadata/maxResponseBodySize`` for bytes received and not yet read.
    /// - Returns: The response head, and its body in chunks, ending when the response does.
    /// - Throws: ``TransportError`` when no response head was read.
    func open(_ request: HTTPRequest, metadata: RequestMetadata) async throws -> (HTTPResponse, ResponseBodyStream)
}

/// A response body as it arrives, a chunk at a time; it ends when the response does, and throws a
/// ``TransportError`` when the connection fails first.
///
/// Read it once. Stopping the iteration, or cancelling the task that reads it, stops the request.
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    private let makeIterator: @Sendable () -> AsyncIterator

    /// A body read from `chunks`, which a transport makes.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        makeIterator = {
            var iterator = chunks.makeAsyncIterator()
            return AsyncIterator { try await iterator.next() }
        }
    }

    /// A body that is already whole: for a transport that collects it, and for tests.
    public init(_ data: Data) {
        self.init(WholeBody(data: data))
    }

    /// Reads the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> Data?

        /// The next chunk, or `nil` once the response ended.
        public mutating func next() async throws -> Data? {
            try await nextChunk()
        }
    }

    /// Starts reading.
    public func makeAsyncIterator() -> AsyncIterator {
        makeIterator()
    }

    /// Collects what the body holds up to `limit` bytes: a refused request's short error body.
    ///
    /// - Throws: ``TransportError/Code/responseTooLarge`` beyond `limit`; what the body throws.
    public func collect(upTo limit: Int) async throws -> Data {
        var body = Data()
        for try await chunk in self {
            guard body.count + chunk.count <= limit else {
                throw TransportError(.responseTooLarge, "the response body is larger than \(limit) bytes")
            }
            body.append(chunk)
        }
        return body
    }
}

/// One chunk, then the end.
private struct WholeBody: AsyncSequence, Sendable {
    let data: Data

    struct AsyncIterator: AsyncIteratorProtocol {
        var data: Data?
        mutating func next() async throws -> Data? {
            defer { data = nil }
            return data.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(data: data) }
}
