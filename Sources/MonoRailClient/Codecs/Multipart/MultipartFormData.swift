public import Foundation
public import MonoRailTransport

/// A `multipart/form-data` body (RFC 7578): text fields and files, files streamed from disk.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("MonoRail Co.", name: "train[company]")
/// form.append(try FileUpload(fileURL: photoURL, mimeType: "image/jpeg"), name: "train[photo]")
/// let response = try await api.send(APIRequest(method: .post, path: "/uploads", body: .multipart(form)))
/// ```
///
/// Names and file names are written as UTF-8 quoted strings, `"` and `\` escaped with a backslash
/// (RFC 9110 §5.6.4, which the reference server's and Python's parsers undo) and CR and LF
/// percent-encoded, since no header may hold them. RFC 7578 §4.2 forbids `filename*`. A part
/// without a content type would be `text/plain`, so files always carry theirs,
/// `application/octet-stream` by default.
public struct MultipartFormData: Sendable {
    enum Part: Sendable {
        case field(name: String, value: String)
        case file(name: String, upload: FileUpload)
    }

    /// The boundary between parts.
    public let boundary: String
    private(set) var parts: [Part] = []

    /// Creates an empty form with a random boundary.
    public init(boundary: String = "monorail-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
    {
        self.boundary = boundary
    }

    /// A form from an encoded tree: every value under its Rails bracket name (`train[tags][]`), and
    /// every placeholder of `attachments` as a file part.
    public init(_ tree: JSONValue, attachments: FileAttachments = FileAttachments()) {
        self.init()
        guard case .object(let object) = tree else { return }
        for (name, value) in QueryEncoder.pairs(object) {
            if let upload = attachments.upload(for: value) {
                parts.append(.file(name: name, upload: upload))
            } else {
                parts.append(.field(name: name, value: value))
            }
        }
    }

    /// The `Content-Type` header value, with the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Whether the form holds at least one file.
    public var hasFiles: Bool { parts.contains { if case .file = $0 { true } else { false } } }

    /// Adds a text field.
    public mutating func append(_ value: String, name: String) {
        parts.append(.field(name: name, value: value))
    }

    /// Adds a file.
    public mutating func append(_ upload: FileUpload, name: String) {
        parts.append(.file(name: name, upload: upload))
    }

    /// The body: headers in memory, files read from disk in chunks while it is sent.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/invalidRequest`` for a remote upload (it has
    ///   no bytes here) or a file that cannot be read.
    public func body() throws -> RequestBody {
        var pieces: [RequestBody] = []
        var pending = Data()
        for part in parts {
            pending.append(contentsOf: Array("--\(boundary)\r\n".utf8))
            switch part {
            case .field(let name, let value):
                pending.append(
                    contentsOf: Array("Content-Disposition: form-data; name=\"\(Self.quote(name))\"\r\n\r\n".utf8))
                pending.append(contentsOf: Array(value.utf8))
            case .file(let name, let upload):
                let disposition = "form-data; name=\"\(Self.quote(name))\"; filename=\"\(Self.quote(upload.fileName))\""
                let type = upload.mimeType.isEmpty ? FileUpload.defaultMimeType : upload.mimeType
                pending.append(
                    contentsOf: Array(
                        "Content-Disposition: \(disposition)\r\nContent-Type: \(Self.headerSafe(type))\r\n\r\n".utf8))
                switch upload.source {
                case .data(let data):
                    pending.append(data)
                case .file(let url):
                    pieces.append(.data(pending))
                    pending = Data()
                    do {
                        pieces.append(try .file(at: url))
                    } catch {
                        throw APIError(
                            .invalidRequest, "cannot read the file to upload at \(url.path)", underlyingError: error)
                    }
                case .remote:
                    throw APIError(
                        .invalidRequest, "\(upload.fileName) is on the server already; there is nothing to upload")
                }
            }
            pending.append(contentsOf: Array("\r\n".utf8))
        }
        pending.append(contentsOf: Array("--\(boundary)--\r\n".utf8))
        pieces.append(.data(pending))
        if pieces.count == 1 { return pieces[0] }
        return try RequestBody.concatenation(of: pieces)
    }

    /// Escapes what would end a quoted parameter or the header line.
    static func quote(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x22 || $0 == 0x5c || $0 == 0x0d || $0 == 0x0a }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    static func headerSafe(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\r" && $0 != "\n" })
    }
}
