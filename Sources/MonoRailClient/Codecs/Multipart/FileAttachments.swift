/// The files met while encoding one body, by the placeholder string that stands for each in the
/// encoded tree.
///
/// MonoRail's encoder writes a ``FileUpload`` as a placeholder and keeps the file here; the
/// client then turns the tree and these files into a `multipart/form-data` body, file parts at
/// the placeholders' names. You only meet this type when building ``APIRequest/Body/tree(_:files:)``
/// yourself.
public struct FileAttachments: Sendable {
    package private(set) var files: [String: FileUpload] = [:]

    /// No files.
    public init() {}

    /// Whether no file was met.
    public var isEmpty: Bool { files.isEmpty }

    /// The number of files.
    public var count: Int { files.count }

    /// Keeps a file and returns the placeholder that stands for it. The NUL prefix keeps
    /// placeholders apart from any text a field could hold in practice.
    package mutating func add(_ upload: FileUpload) -> String {
        let token = "\u{0}monorail-file-\(files.count)"
        files[token] = upload
        return token
    }

    /// The file a placeholder stands for.
    package func upload(for value: String) -> FileUpload? {
        guard value.utf8.first == 0 else { return nil }
        return files[value]
    }
}
