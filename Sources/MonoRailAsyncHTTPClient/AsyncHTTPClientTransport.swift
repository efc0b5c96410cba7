public import AsyncHTTPClient
public import Foundation
public import HTTPTypes
public import MonoRailTransport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

/// A transport built on AsyncHTTPClient (SwiftNIO), the default on Linux.
///
/// On a Linux loopback it measured about half the latency of FoundationNetworking's URLSession and
/// five times its throughput at 32 concurrent requests, which is why the `MonoRail` product picks it
/// there.
///
/// Redirects are followed by the transport itself (up to ``Configuration/maxRedirects``), so that
/// `Authorization` and `Cookie` headers are dropped when a redirect leaves the original origin.
/// File bodies are streamed from disk in chunks; they are never read into memory whole.
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()
/// let client = APIClient(configuration: .init(baseURL: url, transport: transport))
/// ```
public struct AsyncHTTPClientTransport: StreamingTransport {
    /// Settings for an ``AsyncHTTPClientTransport``.
    public struct Configuration: Sendable {
        /// The timeout used when a request's metadata names none.
        public var timeout: Duration
        /// How many redirects one request may follow.
        public var maxRedirects: Int
        /// The chunk size used to stream file bodies from disk.
        public var fileChunkSize: Int

        /// Creates a configuration.
        public init(timeout: Duration = .seconds(60), maxRedirects: Int = 5, fileChunkSize: Int = 256 * 1024) {
            self.timeout = timeout
            self.maxRedirects = maxRedirects
            self.fileChunkSize = fileChunkSize
        }
    }

    private let client: HTTPClient
    private let configuration: Configuration
    /// Only the shared client's pool is known; a client passed in queues as it was configured to.
    private let gate: ConnectionGate?

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - client: The AsyncHTTPClient to use. By default a process-wide client with redirects turned
    ///     off, so this transport can follow them safely. A client you pass in is yours to shut down;
    ///     turn its redirects off too if you want credentials kept on their origin, and build its
    ///     configuration with ``guardingResponses(_:)`` so a malformed status cannot crash it.
    ///   - configuration: Timeouts and limits.
    public init(client: HTTPClient? = nil, configuration: Configuration = Configuration()) {
        self.client = client ?? sharedClient
        self.configuration = configuration
        self.gate = client == nil ? sharedGate : nil
    }

    /// Sends a request; see ``Transport/send(_:body:metadata:)``.
    public func send(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata
    ) async throws -> (HTTPResponse, Data) {
        guard let url = request.url else {
            throw TransportError(.invalidRequest, "the request has no usable URL")
        }
        let timeout = metadata.timeout ?? configuration.timeout
        return try await withDeadline(timeout) {
            guard let gate = self.gate else {
                return try await self.collect(
                    self.follow(request, url: url, body: body, metadata: metadata), metadata: metadata)
            }
            return try await gate.withSlot(for: Self.origin(of: url)) {
                try await self.collect(
                    self.follow(request, url: url, body: body, metadata: metadata), metadata: metadata)
            }
        }
    }

    /// Opens a response whose body is read as it arrives; see ``StreamingTransport/open(_:metadata:)``.
    ///
    /// Redirects are followed as for ``send(_:body:metadata:)``. The body is read as AsyncHTTPClient
    /// delivers it, which asks the server for more only as it is read.
    public func open(_ request: HTTPRequest, metadata: RequestMetadata) async throws -> (
        HTTPResponse, ResponseBodyStream
    ) {
        guard let url = request.url else {
            throw TransportError(.invalidRequest, "the request has no usable URL")
        }
        // A stream holds its connection for as long as it is read: it takes no slot of the gate,
        // which is for requests that end.
        let response = try await follow(request, url: url, body: nil, metadata: metadata)
        return (Self.head(of: response), ResponseBodyStream(StreamedBody(body: response.body)))
    }

    /// The pool AsyncHTTPClient picks a connection from: one per scheme, host and port.
    private static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// Sends the request and follows its redirects; returns the response that is not followed, its
    /// body not yet read.
    private func follow(
        _ request: HTTPRequest,
        url: URL,
        body: RequestBody?,
        metadata: RequestMetadata
    ) async throws -> HTTPClientResponse {
        var request = request
        var url = url
        var body = body
        let origin = url
        for _ in 0...configuration.maxRedirects {
            let response = try await execute(request, url: url, body: body, metadata: metadata)
            let status = Int(response.status.code)
            guard [301, 302, 303, 307, 308].contains(status),
                let location = response.headers.first(name: "location"),
                let target = URL(string: location, relativeTo: url)?.absoluteURL
            else {
                return response
            }
            if status == 303 || ((status == 301 || status == 302) && request.method == .post) {
                request.method = .get
                body = nil
                request.headerFields[.contentType] = nil
                request.headerFields[.contentLength] = nil
            } else if let current = body, !current.isReplayable {
                return response
            }
            if !isSameOrigin(origin, target) {
                // Credentials belong to the origin they were meant for (SPEC §8).
                request.headerFields[.authorization] = nil
                request.headerFields[.cookie] = nil
            }
            url = target
        }
        throw TransportError(.other, "more than \(configuration.maxRedirects) redirects")
    }

    private func execute(
        _ request: HTTPRequest,
        url: URL,
        body: RequestBody?,
        metadata: RequestMetadata
    ) async throws -> HTTPClientResponse {
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        if let body {
            outgoing.body = try makeBody(body, progress: metadata.uploadProgress)
        }
        do {
            let timeout = metadata.timeout ?? configuration.timeout
            return try await client.execute(outgoing, timeout: .nanoseconds(timeout.nanoseconds))
        } catch {
            throw Self.transportError(from: error)
        }
    }

    private func makeBody(
        _ body: RequestBody,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) throws -> HTTPClientRequest.Body {
        switch body.storage {
        case .data(let data):
            guard let progress else { return .bytes(ByteBuffer(data: data)) }
            let chunks = DataChunks(data: data, chunkSize: configuration.fileChunkSize)
            return .stream(
                ProgressReporting(base: chunks, total: Int64(data.count), progress: progress),
                length: HTTPClientRequest.Body.Length.known(Int64(data.count)))
        case .file(let url, let length):
            let chunks = try FileChunks(url: url, chunkSize: configuration.fileChunkSize)
            return .stream(ProgressReporting(base: chunks, total: length, progress: progress), length: .known(length))
        case .segments(_, let length):
            let buffers = body.chunks(size: configuration.fileChunkSize).map { ByteBuffer(data: $0) }
            return .stream(ProgressReporting(base: buffers, total: length, progress: progress), length: .known(length))
        case .stream(let stream, let length):
            let buffers = stream.map { ByteBuffer(data: $0) }
            return .stream(
                ProgressReporting(base: buffers, total: length, progress: progress),
                length: length.map { HTTPClientRequest.Body.Length.known($0) } ?? .unknown)
        }
    }

    private func collect(_ response: HTTPClientResponse, metadata: RequestMetadata) async throws -> (HTTPResponse, Data)
    {
        let head = Self.head(of: response)
        // NIO's parser already refuses a malformed length; the filter keeps a negative one from ever
        // reaching reserveCapacity.
        let expected = response.headers.first(name: "content-length").flatMap { Int64($0) }.flatMap {
            $0 >= 0 ? $0 : nil
        }
        if let file = metadata.responseBodyFile, (200..<300).contains(Int(response.status.code)) {
            try await write(response.body, to: file, expected: expected, progress: metadata.downloadProgress)
            return (head, Data())
        }
        if let expected, expected > metadata.maxResponseBodySize {
            throw TransportError(
                .responseTooLarge, "the response body is larger than \(metadata.maxResponseBodySize) bytes")
        }
        var body = Data()
        if let expected { body.reserveCapacity(Int(expected)) }
        do {
            for try await var chunk in response.body {
                guard body.count + chunk.readableBytes <= metadata.maxResponseBodySize else {
                    throw TransportError(
                        .responseTooLarge, "the response body is larger than \(metadata.maxResponseBodySize) bytes")
                }
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
                chunk.moveReaderIndex(to: chunk.writerIndex)
                metadata.downloadProgress?(TransferProgress(completedBytes: Int64(body.count), totalBytes: expected))
            }
        } catch let error as TransportError {
            throw error
        } catch {
            throw Self.transportError(from: error)
        }
        return (head, body)
    }

    private static func head(of response: HTTPClientResponse) -> HTTPResponse {
        var head = HTTPResponse(
            status: .init(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase))
        for header in response.headers {
            if let name = HTTPField.Name(header.name) {
                head.headerFields.append(HTTPField(name: name, value: header.value))
            }
        }
        return head
    }

    /// Streams a body into a file, a chunk at a time.
    private func write(
        _ body: HTTPClientResponse.Body, to file: URL, expected: Int64?,
        progress: (@Sendable (TransferProgress) -> Void)?
    ) async throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: file)
        else {
            throw TransportError(.invalidRequest, "cannot write the response body to \(file.path)")
        }
        defer { try? handle.close() }
        var written: Int64 = 0
        do {
            for try await chunk in body {
                try chunk.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
                written += Int64(chunk.readableBytes)
                progress?(TransferProgress(completedBytes: written, totalBytes: expected))
            }
        } catch {
            throw Self.transportError(from: error)
        }
    }

    static func transportError(from error: any Error) -> TransportError {
        if let error = error as? TransportError { return error }
        if error is CancellationError {
            return TransportError(.cancelled, "the request was cancelled", underlyingError: error)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .writeTimeout:
                return TransportError(.timedOut, "the request timed out", underlyingError: error)
            case .connectTimeout, .getConnectionFromPoolTimeout:
                return TransportError(.cannotConnect, "connecting to the server timed out", underlyingError: error)
            case .cancelled, .requestStreamCancelled:
                return TransportError(.cancelled, "the request was cancelled", underlyingError: error)
            case .remoteConnectionClosed:
                return TransportError(.connectionClosed, "the server closed the connection", underlyingError: error)
            case .invalidURL, .emptyHost, .emptyScheme:
                return TransportError(.invalidRequest, "the request URL is not usable", underlyingError: error)
            default:
                break
            }
        }
        if error is NIOConnectionError {
            return TransportError(.cannotConnect, "cannot connect to the server", underlyingError: error)
        }
        if case ChannelError.connectTimeout = error {
            return TransportError(.cannotConnect, "cannot connect to the server", underlyingError: error)
        }
        if let error = error as? IOError, [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode) {
            return TransportError(.cannotConnect, "cannot connect to the server", underlyingError: error)
        }
        // A reset or a broken pipe is the connection lost, as much as a clean close is: both are
        // retried under the default policy.
        if let error = error as? IOError, [ECONNRESET, EPIPE, ECONNABORTED].contains(error.errnoCode) {
            return TransportError(.connectionClosed, "the connection was reset", underlyingError: error)
        }
        if error is HTTPParserError || (error as? ChannelError) == .eof
            || (error as? ChannelError) == .ioOnClosedChannel
        {
            return TransportError(
                .connectionClosed, "the connection closed before the response was complete", underlyingError: error)
        }
        return TransportError(.other, String(describing: error), underlyingError: error)
    }
}

/// A response body as AsyncHTTPClient delivers it, as `Data`, its failures as ``TransportError``s.
private struct StreamedBody: AsyncSequence, Sendable {
    let body: HTTPClientResponse.Body

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator

        mutating func next() async throws -> Data? {
            do {
                guard let buffer = try await base.next() else { return nil }
                return Data(buffer: buffer)
            } catch {
                throw AsyncHTTPClientTransport.transportError(from: error)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: body.makeAsyncIterator())
    }
}

private let connectionsPerOrigin = 32
private let sharedGate = ConnectionGate(limit: connectionsPerOrigin)

/// Process-wide client with redirects off: the transport follows them itself to strip credentials.
/// A global is never deinitialised, so AsyncHTTPClient's "not shut down" check cannot fire.
private let sharedClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.redirectConfiguration = .disallow
    configuration.decompression = .disabled
    // A refused connection should fail the request at once (and let MonoRail's retry policy decide),
    // not be retried silently until the deadline.
    configuration.connectionPool.retryConnectionEstablishment = false
    // AsyncHTTPClient keeps 8 per host; an app's one API sees many requests at once (a list's
    // relationship loads, a replaying outbox). Requests past the limit wait in `sharedGate`.
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerOrigin
    return HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: AsyncHTTPClientTransport.guardingResponses(configuration))
}()

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
