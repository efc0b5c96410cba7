public import Foundation

/// Runs `body` with a directory of its own under the temporary directory, removed afterwards
/// however `body` ends: for a test's SQLite file, file cache or downloads.
///
/// ```swift
/// try await withTemporaryDirectory { directory in
///     let storage = try SQLiteStorage(path: directory.appendingPathComponent("app.sqlite").path)
///     …
/// }
/// ```
///
/// - Throws: What `body` throws.
public func withTemporaryDirectory<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
    let directory = newTemporaryURL()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// A directory of its own under the temporary directory, removed with the value: held by a test
/// suite, whose instance lives as long as one test, it takes that test's files with it.
///
/// ```swift
/// @Suite struct ImportTests {
///     let files = TemporaryDirectory()
///
///     @Test func readsASchemaFile() throws {
///         let schema = files.path("schema.json")
///         …
///     }
/// }
/// ```
public final class TemporaryDirectory: Sendable {
    /// The directory; it exists once ``path(_:)`` was first asked.
    public let url = newTemporaryURL()

    /// Names a new directory; nothing is made until a path in it is asked for.
    public init() {}

    /// A path in the directory, which is made if need be; the file itself is not.
    public func path(_ name: String) -> URL {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.appendingPathComponent(name)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A path under the temporary directory that no one else uses.
private func newTemporaryURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("monorail-\(UUID().uuidString)")
}
