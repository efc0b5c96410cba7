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
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("monorail-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}
