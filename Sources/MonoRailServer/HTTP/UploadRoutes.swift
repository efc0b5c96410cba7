import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
import MultipartKit
import NIOCore

/// `POST /uploads`: a `multipart/form-data` endpoint that stores every file part on disk and answers
/// with its field, file name, content type, size and SHA-256, plus the plain fields.
///
/// The body is parsed as it streams in and each file is hashed and written chunk by chunk, so an
/// upload of any size uses a few buffers of memory. Files are stored under random names; the name the
/// client sent is only reported, never used as a path.
struct UploadRoutes: Sendable {
    let directory: URL
    let maxUploadSize: Int

    func install(on router: Router<BasicRequestContext>) {
        router.post("/uploads") { request, _ in try await upload(request) }
    }

    private func upload(_ request: Request) async throws -> Response {
        guard let contentType = request.headers[.contentType],
            contentType.lowercased().hasPrefix("multipart/form-data"),
            let boundary = Self.parameter("boundary", in: contentType), !boundary.isEmpty
        else {
            throw APIProblem(.badRequest, "expected multipart/form-data with a boundary")
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let collector = PartCollector(directory: directory)
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in collector.header(name, value) }
        parser.onBody = { buffer in collector.body(&buffer) }
        parser.onPartComplete = { collector.complete() }
        var received = 0
        do {
            for try await chunk in request.body {
                received += chunk.readableBytes
                guard received <= maxUploadSize else {
                    collector.discard()
                    throw APIProblem(.contentTooLarge, "the upload is larger than \(maxUploadSize) bytes")
                }
                try parser.execute(chunk)
                if let failure = collector.failure { throw failure }
            }
        } catch let problem as APIProblem {
            throw problem
        } catch {
            collector.discard()
            throw APIProblem(.badRequest, "the multipart body is malformed: \(error)")
        }
        guard collector.isComplete else {
            collector.discard()
            throw APIProblem(.badRequest, "the multipart body ended before its closing boundary")
        }
        return JSONResponse.make(
            .created, ["uploads": .array(collector.files), "fields": .object(collector.fields)])
    }

    /// A parameter of a header value: `boundary` in `multipart/form-data; boundary="abc"`.
    static func parameter(_ name: String, in value: String) -> String? {
        for part in value.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var text = pair[1]
            if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 {
                text = String(text.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return text
        }
        return nil
    }

    /// The file name of a part: RFC 5987 `filename*=UTF-8''…` wins over `filename="…"`.
    static func fileName(in disposition: String) -> String? {
        if let extended = parameter("filename*", in: disposition) {
            let pieces = extended.components(separatedBy: "''")
            if pieces.count == 2, let decoded = pieces[1].removingPercentEncoding { return decoded }
        }
        return parameter("filename", in: disposition)
    }
}

/// Receives the parser's callbacks for one request. Used from one task only, one callback at a time.
private final class PartCollector {
    let directory: URL
    var files: [JSONValue] = []
    var fields: [String: JSONValue] = [:]
    var failure: (any Error)?
    private var headers: [String: String] = [:]
    private var handle: FileHandle?
    private var storedURL: URL?
    private var hasher = SHA256()
    private var size = 0
    private var text = Data()
    private var stored: [URL] = []
    private var partInProgress = false
    private var parts = 0

    /// Whether at least one part arrived and none was left half-way.
    var isComplete: Bool { parts > 0 && !partInProgress }

    init(directory: URL) {
        self.directory = directory
    }

    func header(_ name: String, _ value: String) {
        partInProgress = true
        headers[name.lowercased()] = value
    }

    func body(_ buffer: inout ByteBuffer) {
        partInProgress = true
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
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
            files.append([
                "field": .string(field),
                "filename": .string(UploadRoutes.fileName(in: disposition) ?? ""),
                "content_type": .string(headers["content-type"] ?? "application/octet-stream"),
                "size": .int(Int64(size)),
                "sha256": .string(digest),
                "stored_as": .string(storedURL?.lastPathComponent ?? ""),
            ])
        } else {
            fields[field] = .string(String(decoding: text, as: UTF8.self))
        }
        headers = [:]
        handle = nil
        storedURL = nil
        hasher = SHA256()
        size = 0
        text = Data()
        partInProgress = false
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

/// Parsing helpers exposed for tests.
package enum UploadTestsSupport {
    package static func fileName(_ disposition: String) -> String? { UploadRoutes.fileName(in: disposition) }
}
