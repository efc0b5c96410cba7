public import Foundation
import HTTPTypes

/// A file fetched by ``APIClient/download(_:to:resume:options:)``.
public struct Download: Sendable {
    /// Where the file is.
    public var fileURL: URL
    /// The response head of the final request.
    public var response: HTTPResponse
    /// The bytes that were already on disk and kept, when a download resumed; 0 otherwise.
    public var resumedFrom: Int64
    /// The file's size.
    public var size: Int64
}

extension APIClient {
    /// Downloads a path to a file, reporting progress, and resumes a partial file when asked.
    ///
    /// ```swift
    /// let download = try await api.download(
    ///     "/uploads/\(id)", to: destination, resume: true,
    ///     options: RequestOptions(downloadProgress: { print($0.completedBytes) }))
    /// ```
    ///
    /// The body streams to a temporary file beside the destination as it arrives, so a download of
    /// any size uses a few buffers of memory and ``Configuration/maxResponseBodySize`` does not
    /// apply. The destination is then replaced in one rename, so a failed download never leaves a
    /// half-written file where a complete one was. With `resume`, an existing partial file is
    /// continued with `Range: bytes=<size>-`; a server that answers `200` instead of `206` sends the
    /// whole file again, which replaces it.
    ///
    /// - Throws: ``APIError``, as ``send(_:)``, or ``APIError/Code/invalidRequest`` when the file
    ///   cannot be written.
    @discardableResult
    public func download(
        _ path: APIPath, to destination: URL, resume: Bool = false, options: RequestOptions = RequestOptions()
    ) async throws -> Download {
        let directory = destination.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw APIError(.invalidRequest, "cannot create \(directory.path) for the download", underlyingError: error)
        }
        let partial = directory.appendingPathComponent(
            ".\(destination.lastPathComponent).\(UUID().uuidString).download")
        defer { try? FileManager.default.removeItem(at: partial) }
        var request = APIRequest(method: .get, path: path, options: options)
        request.options.deduplicates = false
        request.options.responseBodyFile = partial
        request.headers[.accept] = "*/*"
        let existing = resume ? Self.fileSize(destination) : 0
        if existing > 0 { request.headers[.range] = "bytes=\(existing)-" }
        let response = try await send(request)
        let resumed = existing > 0 && response.statusCode == 206
        do {
            if resumed {
                try Self.append(partial, to: destination)
            } else if rename(partial.path, destination.path) != 0 {
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            throw APIError(
                .invalidRequest, "cannot write the download to \(destination.path)", request: response.request,
                response: response.response, underlyingError: error)
        }
        return Download(
            fileURL: destination, response: response.response, resumedFrom: resumed ? existing : 0,
            size: Self.fileSize(destination))
    }

    /// Appends one file to another in chunks.
    private static func append(_ source: URL, to destination: URL) throws {
        let reader = try FileHandle(forReadingFrom: source)
        defer { try? reader.close() }
        let writer = try FileHandle(forWritingTo: destination)
        defer { try? writer.close() }
        try writer.seekToEnd()
        while let chunk = try reader.read(upToCount: 1 << 20), !chunk.isEmpty {
            try writer.write(contentsOf: chunk)
        }
    }

    static func fileSize(_ url: URL) -> Int64 {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return 0 }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}
