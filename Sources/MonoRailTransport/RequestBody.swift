public import Foundation

/// The body of a request: bytes in memory, a file streamed from disk, or a one-shot stream.
///
/// A body declares whether it can be sent more than once (``isReplayable``). Retry policies only
/// repeat requests whose body is replayable; a ``stream(_:length:)`` body is consumed by the first
/// attempt and never retried.
public struct RequestBody: Sendable {
    package enum Storage: Sendable {
        case data(Data)
        case file(URL, length: Int64)
        case stream(AsyncThrowingStream<Data, any Error>, length: Int64?)
    }

    package let storage: Storage

    /// A body held in memory.
    ///
    /// - Parameter data: The bytes to send.
    /// - Returns: A replayable body.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(storage: .data(data))
    }

    /// A body streamed from a file on disk, without reading the file into memory.
    ///
    /// - Parameter url: A `file:` URL.
    /// - Returns: A replayable body whose length is the file's size.
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest`` when the
    ///   file cannot be read.
    public static func file(at url: URL) throws -> RequestBody {
        guard url.isFileURL else {
            throw TransportError(.invalidRequest, "\(url) is not a file URL")
        }
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            return RequestBody(storage: .file(url, length: size))
        } catch {
            throw TransportError(.invalidRequest, "cannot read the file at \(url.path)", underlyingError: error)
        }
    }

    /// A body produced by an asynchronous stream of chunks. It can be sent once only.
    ///
    /// - Parameters:
    ///   - stream: The chunks to send, in order.
    ///   - length: The total length when known in advance; `nil` sends the body chunked.
    /// - Returns: A body that is not replayable.
    public static func stream(_ stream: AsyncThrowingStream<Data, any Error>, length: Int64? = nil) -> RequestBody {
        RequestBody(storage: .stream(stream, length: length))
    }

    /// Whether the body can be sent again, for example by a retry.
    public var isReplayable: Bool {
        switch storage {
        case .data, .file: true
        case .stream: false
        }
    }

    /// The body's length in bytes, when known.
    public var length: Int64? {
        switch storage {
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(_, let length): length
        }
    }
}
