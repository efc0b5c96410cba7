import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import MonoRailClient
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
        router.post("/upload") { request, _ in try await uploadOne(request) }
        router.get("/uploads/:name") { request, context in try download(request, context) }
    }

    private func upload(_ request: Request) async throws -> Response {
        let received = try await MultipartReceiver(directory: directory, maxSize: maxUploadSize).receive(request)
        var fields: [String: JSONValue] = [:]
        for (name, value) in received.fields { fields[name] = .string(value) }
        return JSONResponse.make(
            .created, ["uploads": .array(received.files.map(\.uploadDescription)), "fields": .object(fields)],
            format: ResponseFormat(request))
    }

    /// `POST /upload`: one file, answered as ApiModel's upload endpoints answer, a record with no id:
    /// `{"upload": {"filename": …, "size": …, "sha256": …, "url": …}}`. 422 without a file.
    private func uploadOne(_ request: Request) async throws -> Response {
        let received = try await MultipartReceiver(directory: directory, maxSize: maxUploadSize).receive(request)
        guard let file = received.files.first else {
            return JSONResponse.make(
                .unprocessableContent, ["errors": ["file": ["can't be blank"]]], format: ResponseFormat(request))
        }
        return JSONResponse.make(.created, ["upload": file.uploadDescription], format: ResponseFormat(request))
    }

    /// `GET /uploads/:name`: a stored file, with an `ETag`, `304 Not Modified` for a matching
    /// `If-None-Match`, and `206 Partial Content` for a `Range: bytes=N-` (resumed downloads).
    private func download(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let name = context.parameters.get("name") ?? ""
        // Stored names are UUIDs: anything else (a path, dots) is refused before touching the disk.
        guard UUID(uuidString: name) != nil else { throw APIProblem(.notFound) }
        let url = directory.appendingPathComponent(name)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.intValue
        else { throw APIProblem(.notFound) }
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        let etag = "\"\(name.prefix(8))-\(size)-\(Int64(modified * 1000))\""
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
        {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        var start = 0
        if let range = request.headers[.range], range.hasPrefix("bytes="), range.hasSuffix("-"),
            let first = Int(range.dropFirst(6).dropLast()), first >= 0, first <= size
        {
            start = first
        }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(start))
        let data = try handle.readToEnd() ?? Data()
        var headers: HTTPFields = [
            .contentType: "application/octet-stream", .eTag: etag, .acceptRanges: "bytes",
        ]
        if start > 0 { headers[.contentRange] = "bytes \(start)-\(size - 1)/\(size)" }
        return Response(
            status: start > 0 ? .partialContent : .ok, headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A parameter of a header value: `boundary` in `multipart/form-data; boundary="abc"`.
    static func parameter(_ name: String, in value: String) -> String? {
        // Semicolons inside quoted strings belong to the value, and `\x` escapes `x` (RFC 9110).
        var parameters: [(String, String)] = []
        var key = ""
        var text = ""
        var inKey = true
        var inQuotes = false
        var escaped = false
        var seenFirst = false
        func finish() {
            if seenFirst, !key.isEmpty {
                parameters.append((key.trimmingCharacters(in: .whitespaces).lowercased(), text))
            }
            seenFirst = true
            key = ""
            text = ""
            inKey = true
        }
        for character in value {
            if inQuotes {
                if escaped {
                    text.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inQuotes = false
                } else {
                    text.append(character)
                }
            } else if character == ";" {
                finish()
            } else if inKey, character == "=" {
                inKey = false
            } else if inKey {
                key.append(character)
            } else if character == "\"" {
                inQuotes = true
            } else if !character.isWhitespace {
                text.append(character)
            }
        }
        finish()
        return parameters.first { $0.0 == name }?.1
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

/// Parsing helpers exposed for tests.
package enum UploadTestsSupport {
    package static func fileName(_ disposition: String) -> String? { UploadRoutes.fileName(in: disposition) }
}
