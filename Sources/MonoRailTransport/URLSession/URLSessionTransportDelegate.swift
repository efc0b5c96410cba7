import Foundation
import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Routes URLSession delegate callbacks to the request waiting on each task.
///
/// Per-task state lives behind one lock; callbacks arrive on the session's serial delegate queue
/// while cancellation arrives from any task, so the lock is what makes both safe.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Exchange {
        var continuation: CheckedContinuation<(HTTPResponse, Data), any Error>
        var metadata: RequestMetadata
        var originalURL: URL?
        var body = Data()
        var failure: TransportError?
        /// Where a successful body is streamed, once the first bytes of one arrived.
        var file: FileHandle?
        var written: Int64 = 0
    }

    private let exchanges = Locked<[Int: Exchange]>([:])

    /// A response whose body is handed over as it arrives (``StreamingTransport``).
    private struct StreamExchange {
        /// Waits for the head; `nil` once it was answered.
        var head: CheckedContinuation<(HTTPResponse, ResponseBodyStream), any Error>?
        var channel: ChunkChannel
        var originalURL: URL?
    }

    private let streams = Locked<[Int: StreamExchange]>([:])

    func open(_ task: URLSessionDataTask, metadata: RequestMetadata, originalURL: URL?) async throws -> (
        HTTPResponse, ResponseBodyStream
    ) {
        let id = task.taskIdentifier
        #if canImport(FoundationNetworking)
            // FoundationNetworking cannot pause a transfer (suspending a running task traps): a reader
            // that falls `maxResponseBodySize` behind fails the body instead, and reconnects.
            let channel = ChunkChannel(limit: metadata.maxResponseBodySize) { [weak task] in task?.cancel() }
        #else
            // A reader slower than the network suspends the task rather than fill memory.
            let channel = ChunkChannel(
                limit: metadata.maxResponseBodySize, onPause: { [weak task] in task?.suspend() },
                onResume: { [weak task] in task?.resume() }, onCancel: { [weak task] in task?.cancel() })
        #endif
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                streams.withLock {
                    $0[id] = StreamExchange(head: continuation, channel: channel, originalURL: originalURL)
                }
                if Task.isCancelled {
                    task.cancel()
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            // Before the head: the request stops. After it, the body's reader owns the task.
            if streams.withLock({ $0[id]?.head != nil }) { task.cancel() }
        }
    }

    func run(_ task: URLSessionTask, metadata: RequestMetadata, originalURL: URL?) async throws -> (HTTPResponse, Data)
    {
        let id = task.taskIdentifier
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchanges.withLock {
                    $0[id] = Exchange(continuation: continuation, metadata: metadata, originalURL: originalURL)
                }
                if Task.isCancelled {
                    task.cancel()
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

    // MARK: - URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        guard
            let (waiter, channel) = streams.withLock({
                table -> (CheckedContinuation<(HTTPResponse, ResponseBodyStream), any Error>?, ChunkChannel)? in
                guard var exchange = table[id] else { return nil }
                defer {
                    exchange.head = nil
                    table[id] = exchange
                }
                return (exchange.head, exchange.channel)
            })
        else {
            completionHandler(.allow)
            return
        }
        guard let waiter else {
            completionHandler(.allow)
            return
        }
        guard let head = (response as? HTTPURLResponse)?.httpResponse else {
            completionHandler(.cancel)
            channel.finish(TransportError(.invalidResponse, "the server sent no HTTP response"))
            waiter.resume(throwing: TransportError(.invalidResponse, "the server sent no HTTP response"))
            return
        }
        completionHandler(.allow)
        waiter.resume(returning: (head, ResponseBodyStream(channel.chunks)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        if let channel = streams.withLock({ $0[id]?.channel }) {
            if !channel.yield(data) { dataTask.cancel() }
            return
        }
        let expected = dataTask.countOfBytesExpectedToReceive
        let (progress, received, tooLarge) = exchanges.withLock {
            table -> ((@Sendable (TransferProgress) -> Void)?, Int64, Bool) in
            guard var exchange = table[id] else { return (nil, 0, false) }
            if let url = exchange.metadata.responseBodyFile,
                let status = (dataTask.response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status)
            {
                do {
                    if exchange.file == nil {
                        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
                            throw TransportError(.invalidRequest, "cannot write the response body to \(url.path)")
                        }
                        exchange.file = try FileHandle(forWritingTo: url)
                    }
                    try exchange.file?.write(contentsOf: data)
                    exchange.written += Int64(data.count)
                } catch {
                    exchange.failure =
                        error as? TransportError
                        ?? TransportError(
                            .other, "cannot write the response body to \(url.path)", underlyingError: error)
                    table[id] = exchange
                    return (nil, 0, true)
                }
                table[id] = exchange
                return (exchange.metadata.downloadProgress, exchange.written, false)
            }
            if exchange.body.count + data.count > exchange.metadata.maxResponseBodySize {
                exchange.failure = TransportError(
                    .responseTooLarge,
                    "the response body is larger than \(exchange.metadata.maxResponseBodySize) bytes")
                table[id] = exchange
                return (nil, 0, true)
            }
            exchange.body.append(data)
            table[id] = exchange
            return (exchange.metadata.downloadProgress, Int64(exchange.body.count), false)
        }
        if tooLarge {
            dataTask.cancel()
            return
        }
        progress?(TransferProgress(completedBytes: received, totalBytes: expected > 0 ? expected : nil))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let progress = exchanges.withLock { $0[task.taskIdentifier]?.metadata.uploadProgress }
        progress?(
            TransferProgress(
                completedBytes: totalBytesSent,
                totalBytes: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let original =
            exchanges.withLock { $0[task.taskIdentifier]?.originalURL }
            ?? streams.withLock { $0[task.taskIdentifier]?.originalURL }
        var redirected = request
        if let original, let target = request.url, !isSameOrigin(original, target) {
            // Credentials belong to the origin they were meant for (SPEC §8).
            redirected.setValue(nil, forHTTPHeaderField: "Authorization")
            redirected.setValue(nil, forHTTPHeaderField: "Cookie")
        }
        completionHandler(redirected)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let stream = streams.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
            let failure = error.map { Self.transportError(from: $0, afterResponseHead: task.response != nil) }
            if let head = stream.head {
                head.resume(throwing: failure ?? TransportError(.other, "the server sent no HTTP response"))
            }
            stream.channel.finish(failure)
            return
        }
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        try? exchange.file?.close()
        if let url = exchange.metadata.responseBodyFile, exchange.file == nil, exchange.failure == nil, error == nil,
            let status = (task.response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status)
        {
            // An empty successful body still leaves an (empty) file behind.
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
        if let failure = exchange.failure {
            exchange.continuation.resume(throwing: failure)
        } else if let error {
            exchange.continuation.resume(
                throwing: Self.transportError(from: error, afterResponseHead: task.response != nil))
        } else if let urlResponse = task.response as? HTTPURLResponse, let response = urlResponse.httpResponse {
            exchange.continuation.resume(returning: (response, exchange.body))
        } else {
            exchange.continuation.resume(throwing: TransportError(.other, "the server sent no HTTP response"))
        }
    }

    // MARK: - Helpers

    static func transportError(from error: any Error, afterResponseHead: Bool) -> TransportError {
        guard let urlError = error as? URLError else {
            return TransportError(.other, error.localizedDescription, underlyingError: error)
        }
        // FoundationNetworking reports a body cut short as an unknown error ("transfer closed with N
        // bytes remaining"); once the head has arrived, any such failure means the connection closed.
        if afterResponseHead, [.unknown, .networkConnectionLost, .cannotParseResponse].contains(urlError.code) {
            return TransportError(
                .connectionClosed, "the connection closed before the response was complete", underlyingError: error)
        }
        switch urlError.code {
        case .timedOut:
            return TransportError(.timedOut, "the request timed out", underlyingError: error)
        case .cancelled:
            return TransportError(.cancelled, "the request was cancelled", underlyingError: error)
        case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .dnsLookupFailed:
            return TransportError(.cannotConnect, "cannot connect to the server", underlyingError: error)
        // FoundationNetworking reports a status line below 100 as an unsupported URL; for an http(s)
        // URL that can only be the response.
        case .unsupportedURL where ["http", "https"].contains(urlError.failingURL?.scheme?.lowercased()):
            return TransportError(
                .invalidResponse, "the server answered with a status HTTP does not define", underlyingError: error)
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse:
            return TransportError(
                .connectionClosed, "the connection closed before the response was complete", underlyingError: error)
        default:
            return TransportError(.other, urlError.localizedDescription, underlyingError: error)
        }
    }
}
