public import Foundation

/// A file to upload: bytes in memory or a file on disk streamed as it is sent (ApiModel's
/// `FileUpload`). Put it in a model's fields or any encoded body, and the request goes out as
/// `multipart/form-data`.
///
/// ```swift
/// avatar.image = FileUpload(fileName: "avatar.jpg", mimeType: "image/jpeg", data: jpeg)
/// avatar.document = try FileUpload(fileURL: URL(fileURLWithPath: "/tmp/report.pdf"))
/// try await avatar.save()
/// ```
///
/// Read back from a server, a file field is a *remote* upload: the name, type, size and URL the
/// server reported, with nothing to send. A remote upload is never sent again.
public struct FileUpload: Sendable, Hashable {
    /// Where the bytes are.
    public enum Source: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A file on disk, read in chunks while the request is sent.
        case file(URL)
        /// A file the server already has, at this URL when it said so.
        case remote(URL?)
    }

    /// The file name the server receives.
    public var fileName: String
    /// The content type of the part. Default: `application/octet-stream`.
    public var mimeType: String
    /// Where the bytes are.
    public var source: Source
    /// The size in bytes, when known.
    public var size: Int64?

    /// The content type used when none is given.
    public static let defaultMimeType = "application/octet-stream"

    /// A file held in memory.
    public init(fileName: String, mimeType: String = FileUpload.defaultMimeType, data: Data) {
        self.fileName = fileName
        self.mimeType = mimeType
        self.source = .data(data)
        self.size = Int64(data.count)
    }

    /// A file on disk, streamed when sent; the name defaults to the file's own.
    ///
    /// - Throws: ``APIError`` with code ``APIError/Code/invalidRequest`` when the file cannot be read.
    public init(fileURL: URL, fileName: String? = nil, mimeType: String = FileUpload.defaultMimeType) throws {
        guard fileURL.isFileURL, let attributes = try? FileManager.default.attributesOfItem(atPath: fileURL.path) else {
            throw APIError(.invalidRequest, "cannot read the file to upload at \(fileURL.path)")
        }
        self.fileName = fileName ?? fileURL.lastPathComponent
        self.mimeType = mimeType
        self.source = .file(fileURL)
        self.size = (attributes[.size] as? NSNumber)?.int64Value
    }

    /// A file the server has; what decoding a file field gives.
    public init(remoteURL: URL?, fileName: String, mimeType: String = FileUpload.defaultMimeType, size: Int64? = nil) {
        self.fileName = fileName
        self.mimeType = mimeType
        self.source = .remote(remoteURL)
        self.size = size
    }

    /// Whether there are bytes to send (in memory or on disk).
    public var isLocal: Bool {
        if case .remote = source { return false }
        return true
    }

    /// The URL the server reported for a remote upload.
    public var remoteURL: URL? {
        if case .remote(let url) = source { return url }
        return nil
    }
}

extension FileUpload: Codable {
    private enum CodingKeys: String, CodingKey {
        case fileName = "file_name"
        case filename, name
        case contentType = "content_type"
        case mimeType = "mime_type"
        case size, url
    }

    /// Reads what servers answer for a file field: an object with a name, a content type, a size
    /// and a URL (`{"file_name": …, "content_type": …, "size": …, "url": …}`, the reference server's
    /// and Active Storage's common keys), or a bare URL string.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let string = try? single.decode(String.self) {
            let url = URL(string: string)
            self.init(remoteURL: url, fileName: url?.lastPathComponent ?? string)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name =
            try container.decodeIfPresent(String.self, forKey: .fileName)
            ?? container.decodeIfPresent(String.self, forKey: .filename)
            ?? container.decodeIfPresent(String.self, forKey: .name) ?? ""
        let type =
            try container.decodeIfPresent(String.self, forKey: .contentType)
            ?? container.decodeIfPresent(String.self, forKey: .mimeType) ?? Self.defaultMimeType
        self.init(
            remoteURL: try container.decodeIfPresent(String.self, forKey: .url).flatMap(URL.init(string:)),
            fileName: name, mimeType: type, size: try container.decodeIfPresent(Int64.self, forKey: .size))
    }

    /// Through MonoRail's encoder a local upload becomes a file part of a multipart body and a
    /// remote one is left out; other encoders see its description
    /// (`{"file_name", "content_type", "size", "url"}`).
    public func encode(to encoder: any Encoder) throws {
        if let encoder = encoder as? ValueEncoderImpl {
            var container = encoder.singleValueContainer()
            try container.encode(isLocal ? JSONValue.string(encoder.context.attachments.add(self)) : JSONValue.null)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fileName, forKey: .fileName)
        try container.encode(mimeType, forKey: .contentType)
        try container.encodeIfPresent(size, forKey: .size)
        try container.encodeIfPresent(remoteURL?.absoluteString, forKey: .url)
    }
}
