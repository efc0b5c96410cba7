public import Foundation
public import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// A transport built on Foundation's `URLSession`, the default on Apple platforms.
///
/// Progress comes from the session delegate's callbacks (`didSendBodyData`, `didReceive data`), which
/// also work with FoundationNetworking on Linux, where `URLSessionTask.progress` stays at zero.
/// File bodies are uploaded with `uploadTask(with:fromFile:)` and never read into memory; stream
/// bodies are spooled to a temporary file first, because FoundationNetworking cannot stream an
/// `AsyncSequence`.
///
/// Redirects are followed, but `Authorization` and `Cookie` headers are dropped when a redirect leaves
/// the original origin.
///
/// ```swift
/// let transport = URLSessionTransport(configuration: .init(timeout: .seconds(15)))
/// let (response, body) = try await transport.send(
///     HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/trains"),
///     body: nil, metadata: RequestMetadata())
/// ```
public final class URLSessionTransport: StreamingTransport {
    /// Settings for a ``URLSessionTransport``.
    public struct Configuration: Sendable {
        /// The timeout used when a request's metadata names none.
        public var timeout: Duration

        /// Creates a configuration.
        public init(timeout: Duration = .seconds(60)) {
            self.timeout = timeout
        }
    }

    /// A process-wide transport with default settings.
    public static let shared = URLSessionTransport()

    private let session: URLSession
    private let delegate: URLSessionTransportDelegate
    private let configuration: Configuration

    /// Creates a transport with its own `URLSession`.
    ///
    /// - Parameters:
    ///   - configuration: Timeout defaults.
    ///   - sessionConfiguration: The session configuration to copy; `.ephemeral` by default, so
    ///     that no cookies or caches are shared with the rest of the app behind MonoRail's back.
    public init(
        configuration: Configuration = Configuration(),
        sessionConfiguration: URLSessionConfiguration = .ephemeral
    ) {
        let delegate = URLSessionTransportDelegate()
        let queue = OperationQueue()
        queue.name = "MonoRail.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        self.delegate = delegate
        self.configuration = configuration
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends a request through the session; see ``Transport/send(_:body:metadata:)``.
    public func send(
        _ request: HTTPRequest,
        body: RequestBody?,
        metadata: RequestMetadata
    ) async throws -> (HTTPResponse, Data) {
        let timeout = metadata.timeout ?? configuration.timeout
        guard var urlRequest = URLRequest(httpRequest: request) else {
            throw TransportError(.invalidRequest, "the request has no usable URL")
        }
        // The idle timeout is a backstop; the overall deadline below is the contract.
        urlRequest.timeoutInterval = max(1, Double(timeout.components.seconds) + 1)
        let session = self.session
        let delegate = self.delegate
        let prepared = urlRequest
        return try await withDeadline(timeout) {
            let upload = try await UploadSource(body: body)
            defer { upload.cleanUp() }
            let task: URLSessionTask
            switch upload {
            case .none: task = session.dataTask(with: prepared)
            case .data(let data): task = session.uploadTask(with: prepared, from: data)
            case .file(let url, _): task = session.uploadTask(with: prepared, fromFile: url)
            }
            return try await delegate.run(task, metadata: metadata, originalURL: prepared.url)
        }
    }
}

extension URLSessionTransport {
    /// Opens a response whose body is read as it arrives; see ``StreamingTransport/open(_:metadata:)``.
    public func open(_ request: HTTPRequest, metadata: RequestMetadata) async throws -> (
        HTTPResponse, ResponseBodyStream
    ) {
        let timeout = metadata.timeout ?? configuration.timeout
        guard var urlRequest = URLRequest(httpRequest: request) else {
            throw TransportError(.invalidRequest, "the request has no usable URL")
        }
        // URLSession's timeout is an idle timeout: the reader of a stream decides how long silence
        // may last, so only a dead connection is left to this backstop.
        urlRequest.timeoutInterval = 3600
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        let url = urlRequest.url
        return try await withDeadline(timeout) {
            try await delegate.open(task, metadata: metadata, originalURL: url)
        }
    }
}

/// What URLSession uploads: nothing, bytes, or a file (possibly a temporary spool of a stream).
private enum UploadSource {
    case none
    case data(Data)
    case file(URL, isTemporary: Bool)

    init(body: RequestBody?) async throws {
        guard let body else {
            self = .none
            return
        }
        switch body.storage {
        case .data(let data): self = .data(data)
        case .file(let url, _): self = .file(url, isTemporary: false)
        case .segments:
            // URLSession on Linux uploads only bytes or a file, so the parts are spooled to one
            // file, chunk by chunk.
            self = try await Self.spool(body.chunks(size: 1 << 16))
        case .stream(let stream, _):
            self = try await Self.spool(stream)
        }
    }

    private static func spool<Chunks: AsyncSequence>(_ stream: Chunks) async throws -> UploadSource
    where Chunks.Element == Data {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("monorail-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: url)
        else {
            throw TransportError(.invalidRequest, "cannot spool the request body to \(url.path)")
        }
        defer { try? handle.close() }
        do {
            for try await chunk in stream {
                try handle.write(contentsOf: chunk)
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw TransportError(.invalidRequest, "the request body stream failed", underlyingError: error)
        }
        return .file(url, isTemporary: true)
    }

    func cleanUp() {
        if case .file(let url, true) = self {
            try? FileManager.default.removeItem(at: url)
        }
    }
}
