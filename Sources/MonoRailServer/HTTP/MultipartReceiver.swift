import Crypto
import Foundation
import Hummingbird
import MonoRailClient
import NIOCore

/// Parses a `multipart/form-data` request body as it streams in: text parts are kept in order,
/// file parts are hashed and written to disk chunk by chunk under random names, so a body of any
/// size uses a few buffers of memory. Shared by `POST /uploads` and resources with file fields.
struct MultipartReceiver {
    let directory: URL
    let maxSize: Int

    struct Received {
        var fields: [(String, String)]
        var files: [StoredFile]
    }

    struct StoredFile {
        var field: String
        var fileName: String
        var contentType: String
        var size: Int
        var sha256: String
        var storedAs: String

        /// What a resource's file field holds.
        var recordValue: JSONValue {
            [
                "file_name": .string(fileName), "content_type": .string(contentType), "size": .int(Int64(size)),
                "sha256": .string(sha256), "url": .string("/uploads/\(storedAs)"),
            ]
        }

        /// What `POST /uploads` reports.
        var uploadDescription: JSONValue {
            [
                "field": .string(field), "filename": .string(fileName), "content_type": .string(contentType),
                "size": .int(Int64(size)), "sha256": .string(sha256), "stored_as": .string(storedAs),
                "url": .string("/uploads/\(storedAs)"),
            ]
        }
    }

    static func isMultipart(_ contentType: String?) -> Bool {
        contentType?.lowercased().hasPrefix("multipart/form-data") == true
    }

    func receive(_ request: Request) async throws -> Received {
        let parse = try Parse(contentType: request.headers[.contentType], directory: directory, maxSize: maxSize)
        do {
            for try await chunk in request.body { try parse.feed(chunk) }
        } catch {
            parse.discard()
            throw error as? APIProblem ?? APIProblem(.badRequest, "the multipart body is malformed: \(error)")
        }
        return try parse.finish()
    }

    /// One body being parsed, fed a chunk at a time: what ``receive(_:)`` does with a request's body,
    /// apart so that the parsing can be driven (and fuzzed) without a server.
    final class Parse {
        private let collector: PartCollector
        private var stream: MultipartStream
        private let maxSize: Int
        private var received = 0

        init(contentType: String?, directory: URL, maxSize: Int) throws {
            guard let contentType, MultipartReceiver.isMultipart(contentType),
                let boundary = UploadRoutes.parameter("boundary", in: contentType),
                (1...70).contains(boundary.utf8.count)
            else {
                throw APIProblem(.badRequest, "expected multipart/form-data with a boundary of 1 to 70 characters")
            }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            self.collector = PartCollector(directory: directory)
            self.stream = MultipartStream(boundary: boundary)
            self.maxSize = maxSize
        }

        /// Parses the next chunk; throws ``APIProblem`` when the body is too large or malformed, after
        /// removing what it stored.
        func feed(_ chunk: ByteBuffer) throws {
            received += chunk.readableBytes
            do {
                guard received <= maxSize else {
                    throw APIProblem(.contentTooLarge, "the upload is larger than \(maxSize) bytes")
                }
                try stream.feed(chunk.readableBytesView) { event in
                    switch event {
                    case .header(let name, let value): collector.header(name, value)
                    case .body(let bytes): collector.body(bytes)
                    case .partComplete: collector.complete()
                    }
                }
                if let failure = collector.failure { throw failure }
            } catch {
                collector.discard()
                throw error as? APIProblem ?? APIProblem(.badRequest, "the multipart body is malformed: \(error)")
            }
        }

        /// The fields and files, once the closing boundary has been read.
        func finish() throws -> Received {
            guard stream.isFinished, collector.hasParts else {
                collector.discard()
                throw APIProblem(.badRequest, "the multipart body ended before its closing boundary")
            }
            return Received(fields: collector.fields, files: collector.files)
        }

        /// Removes what the body stored so far.
        func discard() { collector.discard() }
    }
}

/// Receives the parser's callbacks for one request. Used from one task only, one callback at a time.
final class PartCollector {
    let directory: URL
    var files: [MultipartReceiver.StoredFile] = []
    var fields: [(String, String)] = []
    var failure: (any Error)?
    private var headers: [String: String] = [:]
    private var handle: FileHandle?
    private var storedURL: URL?
    private var hasher = SHA256()
    private var size = 0
    private var text = Data()
    private var stored: [URL] = []
    private var parts = 0

    /// Whether at least one part arrived. (The stream's closing delimiter ends the last one, so none
    /// is left half-way once it has been read.)
    var hasParts: Bool { parts > 0 }

    init(directory: URL) {
        self.directory = directory
    }

    func header(_ name: String, _ value: String) {
        headers[name.lowercased()] = value
    }

    func body(_ bytes: ArraySlice<UInt8>) {
        if isFile {
            do {
                if handle == nil { try open() }
                try handle?.write(contentsOf: bytes)
            } catch {
                failure = error
            }
            hasher.update(data: bytes)
            size += bytes.count
        } else if text.count < 1 << 20 {
            text.append(contentsOf: bytes)
        }
    }

    func complete() {
        let disposition = headers["content-disposition"] ?? ""
        let field = UploadRoutes.parameter("name", in: disposition) ?? ""
        if isFile {
            if handle == nil { try? open() }
            try? handle?.close()
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            files.append(
                MultipartReceiver.StoredFile(
                    field: field, fileName: UploadRoutes.fileName(in: disposition) ?? "",
                    contentType: headers["content-type"] ?? "application/octet-stream", size: size, sha256: digest,
                    storedAs: storedURL?.lastPathComponent ?? ""))
        } else {
            fields.append((field, String(decoding: text, as: UTF8.self)))
        }
        headers = [:]
        handle = nil
        storedURL = nil
        hasher = SHA256()
        size = 0
        text = Data()
        parts += 1
    }

    /// Removes what an incomplete or refused upload stored.
    func discard() {
        try? handle?.close()
        for url in stored { try? FileManager.default.removeItem(at: url) }
    }

    private var isFile: Bool {
        UploadRoutes.fileName(in: headers["content-disposition"] ?? "") != nil
    }

    private func open() throws {
        let url = directory.appendingPathComponent(UUID().uuidString)
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        else {
            throw APIProblem(.internalServerError, "cannot store the upload")
        }
        handle = try FileHandle(forWritingTo: url)
        storedURL = url
        stored.append(url)
    }
}
