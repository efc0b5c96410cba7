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
        case segments([Segment], length: Int64)
    }

    /// One piece of a ``concatenation(of:)`` body.
    package enum Segment: Sendable {
        case data(Data)
        case file(URL, length: Int64)
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

    /// A body made of other bodies sent one after another, such as a `multipart/form-data` body
    /// whose file parts stream from disk between in-memory headers. Files are read in chunks as
    /// the body is sent; nothing is copied up front.
    ///
    /// - Parameter bodies: ``data(_:)`` and ``file(at:)`` bodies (or concatenations of them).
    /// - Returns: A replayable body whose length is the sum of the parts.
    /// - Throws: ``TransportError`` with code ``TransportError/Code/invalidRequest`` for a
    ///   ``stream(_:length:)`` part, which could not be replayed or measured.
    public static func concatenation(of bodies: [RequestBody]) throws -> RequestBody {
        var segments: [Segment] = []
        var length: Int64 = 0
        for body in bodies {
            switch body.storage {
            case .data(let data):
                segments.append(.data(data))
                length += Int64(data.count)
            case .file(let url, let fileLength):
                segments.append(.file(url, length: fileLength))
                length += fileLength
            case .segments(let inner, let innerLength):
                segments += inner
                length += innerLength
            case .stream:
                throw TransportError(.invalidRequest, "a stream body cannot be part of a concatenation")
            }
        }
        return RequestBody(storage: .segments(segments, length: length))
    }

    /// Whether the body can be sent again, for example by a retry.
    public var isReplayable: Bool {
        switch storage {
        case .data, .file, .segments: true
        case .stream: false
        }
    }

    /// The body's length in bytes, when known.
    public var length: Int64? {
        switch storage {
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(_, let length): length
        case .segments(_, let length): length
        }
    }

    /// The body's bytes in order, read on demand in chunks of at most `chunkSize` bytes, so a
    /// transport can stream any replayable body without holding it in memory.
    package func chunks(size chunkSize: Int) -> SegmentChunks {
        switch storage {
        case .data(let data): SegmentChunks(segments: [.data(data)], chunkSize: chunkSize)
        case .file(let url, let length): SegmentChunks(segments: [.file(url, length: length)], chunkSize: chunkSize)
        case .segments(let segments, _): SegmentChunks(segments: segments, chunkSize: chunkSize)
        case .stream: SegmentChunks(segments: [], chunkSize: chunkSize)
        }
    }
}

/// Reads body segments in order, one chunk per `next()`: files through a handle opened when their
/// turn comes, in-memory bytes sliced.
package struct SegmentChunks: AsyncSequence, Sendable {
    package typealias Element = Data
    let segments: [RequestBody.Segment]
    let chunkSize: Int

    package struct AsyncIterator: AsyncIteratorProtocol {
        let segments: [RequestBody.Segment]
        let chunkSize: Int
        var index = 0
        var offset = 0
        var handle: FileHandle?

        package mutating func next() async throws -> Data? {
            while index < segments.count {
                switch segments[index] {
                case .data(let data):
                    if offset < data.count {
                        let end = Swift.min(offset + chunkSize, data.count)
                        defer { offset = end }
                        return data[(data.startIndex + offset)..<(data.startIndex + end)]
                    }
                case .file(let url, _):
                    if handle == nil {
                        do {
                            handle = try FileHandle(forReadingFrom: url)
                        } catch {
                            throw TransportError(
                                .invalidRequest, "cannot read the file at \(url.path)", underlyingError: error)
                        }
                    }
                    if let chunk = try handle?.read(upToCount: chunkSize), !chunk.isEmpty { return chunk }
                    try? handle?.close()
                    handle = nil
                }
                index += 1
                offset = 0
            }
            return nil
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(segments: segments, chunkSize: chunkSize)
    }
}
