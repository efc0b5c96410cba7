import Foundation
import MonoRailTransport
import NIOCore
import NIOFoundationCompat

/// Reads a file in fixed-size chunks, so uploads never hold the whole file in memory.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let url: URL
    let chunkSize: Int

    init(url: URL, chunkSize: Int) throws {
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw TransportError(.invalidRequest, "cannot read the file at \(url.path)")
        }
        self.url = url
        self.chunkSize = chunkSize
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let url: URL
        let chunkSize: Int
        var handle: FileHandle?
        var finished = false

        mutating func next() async throws -> ByteBuffer? {
            if finished { return nil }
            if handle == nil {
                handle = try FileHandle(forReadingFrom: url)
            }
            guard let handle, let data = try handle.read(upToCount: chunkSize), !data.isEmpty else {
                try? handle?.close()
                finished = true
                return nil
            }
            return ByteBuffer(data: data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(url: url, chunkSize: chunkSize)
    }
}

/// Slices in-memory bytes so upload progress can be reported as they are written.
struct DataChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let data: Data
    let chunkSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let data: Data
        let chunkSize: Int
        var offset = 0

        mutating func next() async -> ByteBuffer? {
            guard offset < data.count else { return nil }
            let end = Swift.min(offset + chunkSize, data.count)
            defer { offset = end }
            return ByteBuffer(data: data[data.startIndex + offset..<data.startIndex + end])
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(data: data, chunkSize: chunkSize)
    }
}

/// Counts the bytes a body sequence hands to the client and reports upload progress.
struct ProgressReporting<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let total: Int64?
    let progress: (@Sendable (TransferProgress) -> Void)?

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let total: Int64?
        let progress: (@Sendable (TransferProgress) -> Void)?
        var sent: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            sent += Int64(chunk.readableBytes)
            progress?(TransferProgress(completedBytes: sent, totalBytes: total))
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), total: total, progress: progress)
    }
}
